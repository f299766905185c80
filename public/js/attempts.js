// A delivery's failed attempts: the courier's "could not deliver" form (on the capture view) and
// the list shown with a delivery and on its receipt. Kept apart from the pad's code on purpose.
import { ApiError, NetworkError, deliveryPath, json } from './api.js';
import { REFERENCE_PATTERN, byId, el, flagsNode, formatDistance, formatLocation, localRFC3339, setStatus, timeNode } from './ui.js';

/** What the courier picks from, in the API's words (docs/api.md). */
export const ATTEMPT_REASONS = {
  recipient_absent: 'Recipient not there',
  refused: 'Refused by the recipient',
  address_not_found: 'Address not found',
  access_denied: 'Could not get in',
  damaged: 'Parcel damaged',
  other: 'Other (say in the note)',
};

/** The body and Idempotency-Key of the attempt being sent, reused by a retry of the same form. */
let sending = null;

/** Wires the "Could not deliver" form of the capture view. */
export function mountAttemptForm() {
  byId('attempt-reason').replaceChildren(...Object.entries(ATTEMPT_REASONS).map(([value, label]) =>
    el('option', { value, text: label })));
  byId('attempt-form').addEventListener('submit', (event) => {
    event.preventDefault();
    recordAttempt();
  });
  // Any change makes a new attempt (a new key); an unchanged resubmission is a retry of the same one.
  byId('attempt-form').addEventListener('input', () => { sending = null; });
}

function position() {
  return new Promise((resolve, reject) => {
    if (!navigator.geolocation) return reject(new Error('This browser cannot give a location.'));
    navigator.geolocation.getCurrentPosition(
      (p) => resolve({ lat: p.coords.latitude, lon: p.coords.longitude, accuracy_m: Math.round(p.coords.accuracy * 10) / 10 }),
      (error) => reject(new Error(`No location: ${error.message || 'permission denied or unavailable'}.`)),
      { enableHighAccuracy: true, timeout: 15000, maximumAge: 30000 },
    );
  });
}

async function recordAttempt() {
  const status = byId('attempt-status');
  const reference = byId('attempt-reference').value.trim();
  if (!REFERENCE_PATTERN.test(reference)) {
    setStatus(status, 'Enter the delivery reference (letters, digits and . _ : -).', 'error');
    byId('attempt-reference').focus();
    return;
  }
  const button = byId('attempt-submit');
  button.disabled = true;
  try {
    if (!sending || sending.reference !== reference) {
      const attempt = { outcome: 'failed', reason: byId('attempt-reason').value, captured_at: localRFC3339(new Date()) };
      const note = byId('attempt-note').value.trim();
      if (note) attempt.note = note;
      if (byId('attempt-location').checked) {
        setStatus(status, 'Getting the location…');
        attempt.location = await position();
      }
      const bytes = crypto.getRandomValues(new Uint8Array(16));
      sending = { reference, body: JSON.stringify(attempt), key: 'attempt-' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('') };
    }
    setStatus(status, 'Recording the attempt…');
    const stored = await json(`${deliveryPath(reference)}/attempts`, {
      method: 'POST', body: sending.body, headers: { 'Idempotency-Key': sending.key },
    });
    sending = null;
    setStatus(status, `Recorded: ${ATTEMPT_REASONS[stored.reason] ?? stored.reason} at ${stored.captured_at}` +
      (stored.flags.length ? ` (flags: ${stored.flags.join(', ')})` : '') + '. The delivery stays open for another try.', 'ok');
    byId('attempt-note').value = '';
  } catch (error) {
    const retry = error instanceof NetworkError || (error instanceof ApiError && error.status >= 500);
    if (!retry) sending = null;
    setStatus(status, retry ? `${error.message} Press "Record attempt" again to retry the same attempt.` : error.message, 'error');
  } finally {
    button.disabled = false;
  }
}

/** Fills `list` (an <ol>) with `attempts`, oldest first, and shows `section` only when there are any. */
export function showAttempts(section, list, attempts) {
  const items = (attempts ?? []).map((attempt) => el('li', { class: 'attempt' },
    el('strong', { text: ATTEMPT_REASONS[attempt.reason] ?? attempt.reason }), ' — ', timeNode(attempt.captured_at),
    attempt.note ? el('span', { class: 'attempt-note', text: ` “${attempt.note}”` }) : null,
    el('br'),
    `by ${attempt.recorded_by.name} (${attempt.recorded_by.role})`,
    attempt.location ? `, at ${formatLocation(attempt.location)}` : '',
    attempt.distance_to_destination_m !== null && attempt.distance_to_destination_m !== undefined
      ? `, ${formatDistance(attempt.distance_to_destination_m)} from the destination` : '',
    ', flags: ', flagsNode(attempt.flags)));
  list.replaceChildren(...items);
  section.hidden = items.length === 0;
}
