// A small fetch wrapper: adds the bearer token, and turns problem+json answers and network
// failures into errors whose message a person can read.
import { currentSession } from './session.js';

/** An HTTP answer that was not 2xx. `problem` is the RFC 9457 body when there was one. */
export class ApiError extends Error {
  constructor(status, problem, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
    this.code = problem?.code ?? null;
  }
}

/** The request never got an HTTP answer (offline, connection reset, server down). */
export class NetworkError extends Error {
  constructor(cause) {
    super(`The server could not be reached (${cause?.message ?? cause}). Check the connection and try again.`);
    this.name = 'NetworkError';
  }
}

/** One readable paragraph for a problem document. */
export function describeProblem(status, problem) {
  if (!problem || typeof problem !== 'object') return `The server answered ${status}.`;
  const code = typeof problem.code === 'string' ? problem.code : null;
  let text = problem.detail || problem.title || `The server answered ${status}.`;
  // Details often start with their code ("blank_signature: only 1 point…"): say it once, at the end.
  if (code && text.startsWith(`${code}: `)) text = `${text.slice(code.length + 2)} (${code})`;
  if (status === 401) text = `The API key was not accepted (unknown, revoked or mistyped): ${text} Sign out and sign in again.`;
  if (status === 403) text = `This key's role may not do that. ${text}`;
  for (const error of Array.isArray(problem.errors) ? problem.errors : []) {
    // A field error that only repeats the detail adds nothing.
    if (error.message && text.includes(error.message)) continue;
    const named = error.code && !text.includes(error.code) ? ` (${error.code})` : '';
    text += `\n• ${error.field ?? ''}: ${error.message ?? ''}${named}`;
  }
  if (problem.request_id) text += `\n(request ${problem.request_id})`;
  return text;
}

async function errorFrom(response) {
  let problem = null;
  const type = response.headers.get('Content-Type') ?? '';
  if (type.includes('json')) {
    try { problem = await response.json(); } catch { problem = null; }
  }
  return new ApiError(response.status, problem, describeProblem(response.status, problem));
}

/**
 * Sends a request to the API and returns the Response when it is 2xx; throws ApiError or NetworkError.
 * `body` is sent as given (a string is sent as UTF-8), with Content-Type application/json.
 * `timeoutMs`: give up (a NetworkError) when no answer has come by then.
 */
export async function request(path, { method = 'GET', body, headers = {}, timeoutMs } = {}) {
  const sent = new Headers(headers);
  const session = currentSession();
  if (session) sent.set('Authorization', `Bearer ${session.token}`);
  if (body !== undefined && !sent.has('Content-Type')) sent.set('Content-Type', 'application/json');
  let response;
  try {
    const signal = timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined;
    response = await fetch(path, { method, headers: sent, body, cache: 'no-store', credentials: 'omit', signal });
  } catch (error) {
    throw new NetworkError(error);
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

/** GET (or another method) and parse the JSON answer. */
export async function json(path, options) {
  return (await request(path, options)).json();
}

/** GET a resource as a Blob, with the file name from Content-Disposition when there is one. */
export async function blob(path) {
  const response = await request(path);
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  return { blob: await response.blob(), filename: match ? decodeURIComponent(match[1]) : null, response };
}

/** `/v1/deliveries/{reference}` with the reference escaped. */
export function deliveryPath(reference) {
  return `/v1/deliveries/${encodeURIComponent(reference)}`;
}
