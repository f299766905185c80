// Sends the outbox: every waiting entry of the signed-in key, oldest first, with its own body and
// Idempotency-Key, again and again with growing pauses until the server answers, at once when the
// browser says the network is back, and after every page load. One sender per browser at a time
// (Web Locks where available); a second tab or a replay is harmless anyway: the key makes the
// server answer a repeat with the first answer.
import { ApiError, NetworkError, deliveryPath, request } from './api.js';
import { currentSession } from './session.js';
import * as outbox from './outbox.js';

/** Pauses after the 1st, 2nd, … failed attempt; the last one repeats. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000, 30000, 60000];
/**
 * An attempt without an answer by then counts as failed (a network that swallows packets would
 * otherwise hold the queue for minutes). The server answers an upload in well under a second;
 * the same key makes a late first answer and the retry one proof.
 */
const ATTEMPT_TIMEOUT_MS = 30000;

let timer = null;
let running = false;
let listeners = { changed: () => {}, stored: () => {} };

/** What happened to one attempt: 'stored' (with proof, replayed), 'waiting', 'held' or 'refused'. */
export async function attempt(entry) {
  entry.attempts += 1;
  entry.lastAttemptAt = Date.now();
  try {
    const response = await request(`${deliveryPath(entry.reference)}/proof`, {
      method: 'POST', body: entry.body, headers: { 'Idempotency-Key': entry.key }, timeoutMs: ATTEMPT_TIMEOUT_MS,
    });
    const proof = await response.json();
    await outbox.remove(entry.key);
    return { outcome: 'stored', proof, replayed: response.headers.get('Idempotent-Replayed') === 'true' };
  } catch (error) {
    entry.lastError = error.message;
    entry.state = stateAfter(error);
    entry.nextAttemptAt = entry.state === 'waiting'
      ? Date.now() + BACKOFF_MS[Math.min(entry.attempts, BACKOFF_MS.length) - 1] : null;
    await outbox.save(entry);
    return { outcome: entry.state, error };
  }
}

/** Waiting (retried by itself), held (the key was not accepted) or refused (a client error). */
function stateAfter(error) {
  if (error instanceof NetworkError) return 'waiting';
  if (!(error instanceof ApiError)) return 'waiting';
  if (error.code === 'idempotency_key_in_flight' || error.status === 429 || error.status >= 500) return 'waiting';
  if (error.status === 401 || error.status === 403) return 'held';
  return 'refused';
}

/** Entries the signed-in key may send (an entry goes out only under the key that captured it). */
export async function mine() {
  const keyId = currentSession()?.keyId ?? null;
  return (await outbox.entries()).filter((entry) => entry.keyId === keyId);
}

/** `changed()` runs after every attempt; `stored(entry, proof, replayed)` when an entry reached the server. */
export function start(callbacks) {
  listeners = { ...listeners, ...callbacks };
  window.addEventListener('online', () => sendDue({ all: true }));
  // After a page load (perhaps a new sign-in), everything of this key gets one try at once.
  sendDue({ all: true });
}

/** Sends now every waiting entry (`all`: also held ones, for "Send now"). */
export function sendNow() {
  return sendDue({ all: true });
}

async function sendDue({ all = false } = {}) {
  clearTimeout(timer);
  timer = null;
  if (running) return;
  running = true;
  try {
    if (navigator.locks) {
      await navigator.locks.request('countersign-outbox', { ifAvailable: true }, async (lock) => {
        if (lock) await sendEach(all);
      });
    } else {
      await sendEach(all);
    }
  } catch (error) {
    console.warn('outbox:', error);
  } finally {
    running = false;
    await schedule();
  }
}

async function sendEach(all) {
  for (const entry of await mine()) {
    const due = entry.state === 'waiting' && (all || (entry.nextAttemptAt ?? 0) <= Date.now());
    if (!due && !(all && entry.state === 'held')) continue;
    const result = await attempt(entry);
    if (result.outcome === 'stored') listeners.stored(entry, result.proof, result.replayed);
    listeners.changed();
    // Offline: the others would fail the same way; the next round tries again.
    if (result.error instanceof NetworkError) break;
  }
}

/** Wakes up for the earliest waiting entry (another tab's lock or a failure may have left some). */
async function schedule() {
  let waiting;
  try {
    waiting = (await mine()).filter((entry) => entry.state === 'waiting');
  } catch {
    return;
  }
  if (waiting.length === 0) return;
  const next = Math.min(...waiting.map((entry) => entry.nextAttemptAt ?? 0));
  clearTimeout(timer);
  timer = setTimeout(() => sendDue(), Math.max(250, next - Date.now()));
}
