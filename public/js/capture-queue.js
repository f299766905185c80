// The outbox on the capture view: what waits to be sent (reference, signer, capture time,
// attempts, the last error, the next try), "Send now", and "Discard" for what the server refused.
import * as outbox from './outbox.js';
import * as sender from './outbox-sender.js';
import { byId, el, localTime, setStatus } from './ui.js';

const STATE_TEXT = {
  waiting: 'waiting for the server',
  held: 'the key was not accepted: sign in again, then "Send now"',
  refused: 'refused by the server: correct and capture again, then discard this one',
};

export function mount() {
  byId('outbox-send').addEventListener('click', async () => {
    setStatus(byId('outbox-status'), 'Sending…');
    await sender.sendNow();
    await refresh();
  });
  refresh();
}

/** Says that an entry went out (the line stays until the next one). */
export function announce(text) {
  setStatus(byId('outbox-sent'), text, 'ok');
}

/** Redraws the list from IndexedDB. */
export async function refresh() {
  const panel = byId('outbox');
  let entries;
  let others;
  try {
    entries = await sender.mine();
    others = (await outbox.entries()).length - entries.length;
  } catch (error) {
    panel.hidden = false;
    byId('outbox-list').replaceChildren();
    setStatus(byId('outbox-status'), `The outbox cannot be read: ${error.message}`, 'error');
    return;
  }
  panel.hidden = entries.length === 0 && others === 0;
  byId('outbox-title').textContent = `Waiting to be sent (${entries.length})`;
  byId('outbox-list').replaceChildren(...entries.map(item));
  const refused = entries.filter((entry) => entry.state !== 'waiting').length;
  // Captures of another key stay on the device and go out when that key signs in here again.
  const elsewhere = others > 0 ? ` ${others} more from another API key wait for that key to sign in.` : '';
  setStatus(byId('outbox-status'), (entries.length === 0 ? '' : refused > 0
    ? `${refused} of ${entries.length} need your attention.`
    : 'Kept on this device and sent by itself when the server can be reached, also after a reload.') + elsewhere,
  refused > 0 ? 'error' : 'info');
}

function item(entry) {
  const when = entry.nextAttemptAt && entry.state === 'waiting'
    ? `next try ${localTime(new Date(entry.nextAttemptAt)).slice(11, 19)}` : STATE_TEXT[entry.state];
  const line = el('li', { class: `outbox-item ${entry.state}`, 'data-key': entry.key },
    el('strong', { text: entry.reference }), ` — ${entry.signer}, captured ${localTime(new Date(entry.capturedAt))}`,
    el('br'),
    el('span', { class: 'hint', text: `${entry.attempts} attempt(s); ${when}.` }),
    entry.lastError ? el('span', { class: 'outbox-error', text: ` Last error: ${entry.lastError}` }) : null);
  if (entry.state === 'refused') {
    const discard = el('button', { type: 'button', text: `Discard ${entry.reference}` });
    discard.addEventListener('click', async () => {
      await outbox.remove(entry.key);
      await refresh();
    });
    line.append(' ', discard);
  }
  return line;
}
