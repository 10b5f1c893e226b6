// The console talks to the sidecar only through its REST API, with the tab's bearer token.

const TOKEN_KEY = 'blocklist.console.token';

export function savedToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

export function saveToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage refused (private mode): the token lives only as long as the page
  }
}

/** An API answer that is not 2xx: the status and the API's own messages (Flink's {"errors": […]}). */
export class ApiError extends Error {
  constructor(status, messages) {
    super(messages.join('; '));
    this.status = status;
    this.messages = messages;
  }
}

/** One call. Resolves to the parsed body (or {} when empty); rejects with ApiError. */
export async function call(token, method, path, body, extraHeaders) {
  return (await callFull(token, method, path, body, extraHeaders)).body;
}

/** One call, resolving to {status, body}. */
export async function callFull(token, method, path, body, extraHeaders) {
  const headers = { accept: 'application/json', ...extraHeaders };
  if (token) headers.authorization = `Bearer ${token}`;
  const init = { method, headers, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, [`the sidecar cannot be reached: ${e.message}`]);
  }
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const messages = Array.isArray(parsed?.errors) && parsed.errors.length ? parsed.errors.map(String) : [`HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`];
    if (res.status === 429) {
      const after = res.headers.get('retry-after');
      if (after) messages.push(`retry after ${after} s`);
    }
    throw new ApiError(res.status, messages);
  }
  if (parsed === undefined) throw new ApiError(res.status, ['the sidecar answered something that is not JSON']);
  return { status: res.status, body: parsed };
}

/**
 * The version of an item as the page shows it, for HTTP If-Match (the API's ETag of an item:
 * model/item.ts itemTag): a confirm then changes only that version, never a newer one another
 * admin made meanwhile (the API answers 412 instead). Undefined for a row without stamps.
 */
export function versionOf(item) {
  return item?.createdAt && item?.updatedAt ? { 'if-match': `"${item.createdAt}.${item.updatedAt}"` } : undefined;
}

const COLLECTION = { node: 'nodes', taskmanager: 'taskmanagers', rack: 'racks' };

/** The path of one item: nodes/<host>, taskmanagers/<host>%2F<container> or racks/%2F<rack>. */
export function itemPath(kind, id) {
  return `/blocklist/${COLLECTION[kind] ?? 'nodes'}/${encodeURIComponent(id)}`;
}

/**
 * The kind an id has by its shape, as the API reads a batch's ids: a rack path starts with '/', a
 * task manager is <host>/<container>. For rows known only by id (quarantined rows, which the
 * store cannot decode, so their kind is not known otherwise).
 */
export function kindOfId(id) {
  return id.startsWith('/') ? 'rack' : id.includes('/') ? 'taskmanager' : 'node';
}
