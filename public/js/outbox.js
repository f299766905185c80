// The outbox: captured signatures that are not stored on the server yet, kept in IndexedDB so a
// reload, a crash or a closed tab loses none of them. Each entry keeps the exact request body and
// the Idempotency-Key made when the signature was captured, so however often it is sent, the
// server stores it once.
//
// An entry: {key (the Idempotency-Key, primary key), reference, signer, body, keyId (the API key
// that captured it; only that key sends it), capturedAt, queuedAt, attempts, lastError,
// lastAttemptAt, nextAttemptAt (ms since the epoch), state: 'waiting' | 'held' | 'refused'}.
// 'held': the key was not accepted (sign in again, then "Send now"); 'refused': the server
// answered with a client error (unknown or already delivered reference, bad ink): it waits for
// the courier to discard it, never silently dropped.

const DATABASE = 'countersign-console';
const STORE = 'outbox';

let opening = null;

function promised(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function database() {
  if (!opening) {
    if (!globalThis.indexedDB) return Promise.reject(new Error('This browser has no IndexedDB (a private window?).'));
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: 'key' });
    opening = promised(request).catch((error) => {
      opening = null;
      throw error;
    });
  }
  return opening;
}

/** Runs `work(store)` in a transaction and resolves once it committed. */
async function transact(mode, work) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(STORE, mode);
    let result;
    Promise.resolve(work(transaction.objectStore(STORE))).then((value) => { result = value; }, reject);
    transaction.oncomplete = () => resolve(result);
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error('The outbox transaction was aborted.'));
  });
}

/** Every entry, oldest first. */
export async function entries() {
  const all = await transact('readonly', (store) => promised(store.getAll()));
  return all.sort((a, b) => a.queuedAt - b.queuedAt);
}

/** Adds or replaces an entry; resolves once it is on disk. */
export function save(entry) {
  return transact('readwrite', (store) => promised(store.put(entry)));
}

export function remove(key) {
  return transact('readwrite', (store) => promised(store.delete(key)));
}
