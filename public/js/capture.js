// The capture pad: the reference courier client. Records the signature, uploads it with an
// Idempotency-Key (the same key for every retry of the same body) and shows what the server stored.
import { ApiError, NetworkError, blob, deliveryPath, json, request } from './api.js';
import { mountAttemptForm } from './attempts.js';
import { InkPad } from './ink.js';
import {
  REFERENCE_PATTERN, byId, clearImage, el, fillDetails, flagsNode, formatDistance, localRFC3339, mono, setStatus,
  sha256Hex, showBlob, timeNode,
} from './ui.js';

/** Waits before each retry of a request that got no answer (or a 502/503/504, or "in flight"). */
const RETRY_DELAYS_MS = [500, 1000, 2000, 4000, 8000];
const APP = 'countersign-console/1';

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
}

function nextSignature() {
  pad.clear();
  pending = null;
  byId('capture-signer').value = '';
  byId('capture-reference').value = '';
  byId('capture-result').hidden = true;
  byId('capture-figures').hidden = true;
  suggestReferences();
  clearImage(byId('capture-png'));
  clearImage(byId('capture-svg'));
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
      (error) => reject(new Error(`No location: ${error.message || 'permission denied or unavailable'}.`)),
      { enableHighAccuracy: true, timeout: 15000, maximumAge: 30000 },
    );
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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
  if (pad.isEmpty) return invalid('Sign in the box first.', byId('capture-pad'));

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
      pending = { fingerprint, reference, body, key: randomKey() };
    }
    // What exactly went over the wire, for the browser test's byte-for-byte check.
    window.countersignLastUpload = { reference, body: pending.body, idempotencyKey: pending.key };
    const { proof, replayed } = await send(pending);
    await showResult(proof, replayed, pending.body);
  } catch (error) {
    setStatus(status, `Not stored. ${error.message}`, 'error');
  } finally {
    button.disabled = false;
  }
}

async function send({ reference, body, key }) {
  for (let attempt = 0; ; attempt += 1) {
    setStatus(status, attempt === 0 ? 'Uploading…' : `Uploading (attempt ${attempt + 1}, same Idempotency-Key)…`);
    try {
      const response = await request(`${deliveryPath(reference)}/proof`, {
        method: 'POST', body, headers: { 'Idempotency-Key': key },
      });
      return { proof: await response.json(), replayed: response.headers.get('Idempotent-Replayed') === 'true' };
    } catch (error) {
      const retry = error instanceof NetworkError ||
        (error instanceof ApiError && (error.code === 'idempotency_key_in_flight' || [502, 503, 504].includes(error.status)));
      if (!retry || attempt >= RETRY_DELAYS_MS.length) throw error;
      setStatus(status, `${error.message} Retrying in ${RETRY_DELAYS_MS[attempt] / 1000} s.`);
      await sleep(RETRY_DELAYS_MS[attempt]);
    }
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
