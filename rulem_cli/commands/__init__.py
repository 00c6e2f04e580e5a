"""One module per `rulem-db` subcommand. Each defines `register(subparsers)` and is found by
rulem_cli.main at start-up, so a new command is a new file and nothing else changes."""
