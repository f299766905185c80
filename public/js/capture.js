// The capture pad: the reference courier client. Records the signature, keeps it in the outbox
// (IndexedDB) with the Idempotency-Key made at capture time, uploads it, and shows what the server
// stored. What cannot be sent now waits in the outbox and goes when the server can be reached.
import { ApiError, blob, json } from './api.js';
import * as queue from './capture-queue.js';
import { mountAttemptForm } from './attempts.js';
import { InkPad } from './ink.js';
import * as outbox from './outbox.js';
import * as sender from './outbox-sender.js';
import { currentSession } from './session.js';
import {
  REFERENCE_PATTERN, byId, clearImage, el, fillDetails, flagsNode, formatDistance, localRFC3339, mono, setStatus,
  sha256Hex, showBlob, timeNode,
} from './ui.js';

const APP = 'countersign-console/1';
/** The message asking for a signature; it goes away as soon as the pad has ink. */
const SIGN_FIRST = 'Sign in the box first.';

let pad;
let status;
/** The body built for the current signature and its Idempotency-Key, reused until anything changes. */
let pending = null;

export function mount() {
  status = byId('capture-status');
  pad = new InkPad(byId('capture-pad'), updateControls);
  byId('capture-undo').addEventListener('click', () => pad.undo());
  byId('capture-clear').addEventListener('click', () => pad.clear());
  byId('capture-form').addEventListener('submit', (event) => {
    event.preventDefault();
    upload();
  });
  byId('capture-next').addEventListener('click', nextSignature);
  mountAttemptForm();
  updateControls();
  suggestReferences();
  queue.mount();
  sender.start({ changed: queue.refresh, stored: storedFromOutbox });
}

/** An outbox entry reached the server: say so, and show it when the pad is not busy with another. */
function storedFromOutbox(entry, proof, replayed) {
  queue.announce(`Sent ${entry.reference} (signed by ${entry.signer}) from this device's outbox.`);
  if (pad.isEmpty && byId('capture-result').hidden) showResult(proof, replayed, entry.body);
}

/** Offers the references of pending deliveries as suggestions for the reference field. */
async function suggestReferences() {
  try {
    const page = await json('/v1/deliveries?status=pending&limit=200');
    byId('capture-references').replaceChildren(...page.items.map((delivery) =>
      el('option', { value: delivery.reference, label: `${delivery.recipient.name}, ${delivery.address}` })));
  } catch {
    // Only suggestions: typing the reference works without them.
  }
}

function updateControls() {
  const empty = pad.isEmpty;
  byId('capture-undo').disabled = empty;
  byId('capture-clear').disabled = empty;
  byId('capture-pad-count').textContent = empty ? '' : `${pad.strokeCount} stroke(s), ${pad.pointCount} points.`;
  if (!empty && status.textContent === SIGN_FIRST) setStatus(status, '');
}

/** An empty pad and form for the next signature (the status line stays). */
function clearForm() {
  pad.clear();
  pending = null;
  byId('capture-signer').value = '';
  byId('capture-reference').value = '';
  byId('capture-result').hidden = true;
  byId('capture-figures').hidden = true;
  suggestReferences();
  clearImage(byId('capture-png'));
  clearImage(byId('capture-svg'));
}

function nextSignature() {
  clearForm();
  setStatus(status, '');
  byId('capture-reference').focus();
}

function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return 'console-' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function currentPosition() {
  return new Promise((resolve, reject) => {
    if (!navigator.geolocation) {
      reject(new Error('This browser cannot give a location (it needs https or localhost).'));
      return;
    }
    navigator.geolocation.getCurrentPosition(
      (position) => resolve({
        lat: position.coords.latitude,
        lon: position.coords.longitude,
        accuracy_m: Math.round(position.coords.accuracy * 10) / 10,
      }),
      (error) => reject(new Error(locationFailure(error))),
      { enableHighAccuracy: true, timeout: 15000, maximumAge: 30000 },
    );
  });
}

/** A sentence for a GeolocationPositionError (its message is the browser's own wording). */
function locationFailure(error) {
  switch (error?.code) {
    case 1: return 'This site may not use the location: the permission was refused.';
    case 3: return 'The location did not arrive in time.';
    default: return 'The device could not determine its location.';
  }
}

function invalid(message, field) {
  setStatus(status, message, 'error');
  field?.focus();
}

async function upload() {
  const referenceField = byId('capture-reference');
  const signerField = byId('capture-signer');
  const reference = referenceField.value.trim();
  const signer = signerField.value.trim();
  if (!REFERENCE_PATTERN.test(reference)) {
    return invalid('Enter the delivery reference (letters, digits and . _ : -).', referenceField);
  }
  if (!signer) return invalid('Enter the name of the person signing.', signerField);
  if (pad.isEmpty) return invalid(SIGN_FIRST, byId('capture-pad'));

  const ink = pad.toInk();
  const withLocation = byId('capture-location').checked;
  const fingerprint = JSON.stringify([reference, signer, withLocation, ink]);
  const button = byId('capture-upload');
  button.disabled = true;
  try {
    if (!pending || pending.fingerprint !== fingerprint) {
      let location;
      if (withLocation) {
        setStatus(status, 'Getting the location…');
        try {
          location = await currentPosition();
        } catch (error) {
          return invalid(`${error.message} Untick "Attach this device's location" to upload without it.`);
        }
      }
      const body = JSON.stringify({
        signer: { name: signer },
        captured_at: localRFC3339(pad.startedAt),
        location,
        device: { app: APP },
        ink,
      });
      pending = { fingerprint, entry: newEntry(reference, signer, body) };
    }
    const { entry } = pending;
    // What exactly went over the wire, for the browser test's byte-for-byte check.
    window.countersignLastUpload = { reference, body: entry.body, idempotencyKey: entry.key };
    await keep(entry);
    setStatus(status, 'Uploading…');
    const result = await sender.attempt(entry);
    queue.refresh();
    if (result.outcome === 'stored') {
      pending = null;
      await showResult(result.proof, result.replayed, entry.body);
    } else if (result.outcome === 'refused') {
      // The courier is here to correct it: nothing waits in the outbox.
      await outbox.remove(entry.key);
      pending = null;
      queue.refresh();
      setStatus(status, `Not stored. ${result.error.message}`, 'error');
    } else if (result.outcome === 'held') {
      setStatus(status, `Saved on this device, but not sent: ${result.error.message} It waits in the outbox.`, 'error');
      clearForm();
    } else {
      setStatus(status, `Saved on this device; it will be sent when the server can be reached (${result.error.message})`);
      clearForm();
    }
  } catch (error) {
    setStatus(status, `Not stored. ${error.message}`, 'error');
  } finally {
    button.disabled = false;
  }
}

function newEntry(reference, signer, body) {
  return {
    key: randomKey(), reference, signer, body, keyId: currentSession()?.keyId ?? null,
    capturedAt: pad.startedAt.getTime(), queuedAt: Date.now(),
    attempts: 0, lastError: null, lastAttemptAt: null, nextAttemptAt: null, state: 'waiting',
  };
}

/** Puts the entry in the outbox before the first byte is sent, so a reload cannot lose it. */
async function keep(entry) {
  try {
    await outbox.save(entry);
  } catch (error) {
    // Still worth sending; only the safety net is missing.
    setStatus(status, `This device cannot keep signatures while offline (${error.message}). Uploading…`);
  }
}

async function showResult(proof, replayed, body) {
  const sent = await sha256Hex(new TextEncoder().encode(body));
  const digestCheck = sent === null ? '' : sent === proof.points_sha256 ? 'matches what this device sent' : 'DIFFERS from what this device sent';
  fillDetails(byId('capture-details'), [
    ['Reference', proof.reference],
    ['Proof id', mono(proof.proof_id)],
    ['Received at', timeNode(proof.received_at)],
    ['Distance to destination', formatDistance(proof.distance_to_destination_m)],
    ['Flags', flagsNode(proof.flags)],
    ['Points SHA-256', el('span', {}, mono(proof.points_sha256), digestCheck && el('span', { class: 'hint', text: ` (${digestCheck})` }))],
    ['PNG SHA-256', mono(proof.png_sha256)],
  ]);
  byId('capture-result').hidden = false;
  setStatus(status, replayed ? 'Already stored: the server replayed its first answer.' : 'Stored.', 'ok');
  // On a phone the result is below the pad: bring "Next signature" (first in the result) into view.
  byId('capture-next').focus({ preventScroll: true });
  byId('capture-result').scrollIntoView({ block: 'start' });
  try {
    const [png, svg] = await Promise.all([blob(proof.links.png), blob(proof.links.svg)]);
    showBlob(byId('capture-png'), png.blob);
    showBlob(byId('capture-svg'), svg.blob);
    byId('capture-figures').hidden = false;
  } catch (error) {
    const reason = error instanceof ApiError && error.status === 403
      ? 'This key may upload proofs but not read them back, so the rendered signature cannot be shown here.'
      : `The rendered signature could not be loaded: ${error.message}`;
    setStatus(status, `Stored. ${reason}`, 'error');
  }
}
