// Reading the JSON API of rulem-db serve. Every failure becomes one readable line (the
// server's own "error" when it gives one), so the panel can say what went wrong.

async function reason(response) {
  let text = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    const said = body && (body.error || body.detail);
    if (said) text = typeof said === "string" ? said : JSON.stringify(said);
  } catch (_) {
    // not JSON: keep the status line
  }
  return text;
}

/** GET a JSON document; params with empty values are left out. */
export async function getJSON(path, params = {}) {
  const url = new URL(path, window.location.href);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(await reason(response));
  return response.json();
}

/** POST a JSON body, read a JSON answer. */
export async function postJSON(path, body) {
  const response = await fetch(new URL(path, window.location.href), {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await reason(response));
  return response.json();
}
