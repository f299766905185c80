// Deliveries (dispatcher; read-only for auditors): search, open one with its signature and proof
// details, create deliveries.
import { ApiError, blob, deliveryPath, json } from './api.js';
import { showAttempts } from './attempts.js';
import { mountProtection, showProtection } from './protection.js';
import { mayCreateDeliveries, mayReadPoints } from './session.js';
import {
  REFERENCE_PATTERN, byId, clearImage, dayStart, deviceTimeNode, el, fillDetails, flagsNode, formatDistance, formatLocation,
  mono, openStreetMapURL, saveBlob, setStatus, showBlob, timeNode,
} from './ui.js';

const PAGE_SIZE = 25;
let nextPage = null;   // the API's `next` link of the last listing
let openToken = 0;     // drops answers for a delivery that is no longer the one open

export function mount() {
  byId('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    search();
  });
  byId('search-more').addEventListener('click', () => list(nextPage, true));
  byId('create-form').addEventListener('submit', (event) => {
    event.preventDefault();
    create();
  });
  byId('detail-points').addEventListener('click', downloadPoints);
  mountProtection(openDelivery);
  byId('create-panel').hidden = !mayCreateDeliveries();
  list(`/v1/deliveries?limit=${PAGE_SIZE}`, false);
}

async function search() {
  const status = byId('search-status-text');
  const reference = byId('search-reference').value.trim();
  if (reference) {
    if (!REFERENCE_PATTERN.test(reference)) {
      setStatus(status, 'A reference is letters, digits and . _ : - (starting with a letter or digit).', 'error');
      return;
    }
    setStatus(status, `Looking up ${reference}…`);
    try {
      const delivery = await json(deliveryPath(reference));
      showRows([delivery], false, null);
      setStatus(status, 'One delivery with this reference (the other filters apply to lists only).');
      openDelivery(delivery.reference);
    } catch (error) {
      showRows([], false, null);
      setStatus(status, error instanceof ApiError && error.status === 404 ? `No delivery has the reference ${reference}.` : error.message, 'error');
    }
    return;
  }
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  addTextSearch(query);
  const state = byId('search-status').value;
  const since = byId('search-since').value;
  const until = byId('search-until').value;
  if (state) query.set('status', state);
  if (since) query.set('since', dayStart(since));
  if (until) query.set('until', dayStart(until, 1));
  await list(`/v1/deliveries?${query}`, false);
}

/**
 * `q` (a reference prefix, or words of the recipient, address or signer) and `flag` (one proof
 * flag) for GET /v1/deliveries; the server decides how `q` matches.
 */
function addTextSearch(query) {
  const text = byId('search-q').value.trim();
  const flag = byId('search-flag').value;
  if (text) query.set('q', text);
  if (flag) query.set('flag', flag);
}

async function list(path, append) {
  const status = byId('search-status-text');
  setStatus(status, 'Searching…');
  try {
    const page = await json(path);
    showRows(page.items, append, page.next);
    const shown = byId('search-results').tBodies[0].rows.length;
    setStatus(status, shown === 0 ? 'No deliveries match.' : `${shown} deliver${shown === 1 ? 'y' : 'ies'} shown, newest first.`);
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

function showRows(items, append, next) {
  const table = byId('search-results');
  const body = table.tBodies[0];
  if (!append) body.replaceChildren();
  for (const delivery of items) {
    const open = el('button', { type: 'button', class: 'link', text: delivery.reference });
    open.addEventListener('click', () => openDelivery(delivery.reference));
    body.append(el('tr', {},
      el('td', {}, open),
      el('td', { text: delivery.recipient.name }),
      el('td', { text: delivery.status }),
      el('td', {}, timeNode(delivery.created_at)),
      el('td', { text: delivery.proof?.signer?.name ?? '—' })));
  }
  table.hidden = body.rows.length === 0;
  nextPage = next;
  byId('search-more').hidden = !next;
}

async function openDelivery(reference) {
  const token = ++openToken;
  const article = byId('delivery-detail');
  const status = byId('detail-status');
  article.hidden = false;
  byId('detail-title').textContent = `Delivery ${reference}`;
  byId('detail-details').replaceChildren();
  byId('detail-figures').hidden = true;
  clearImage(byId('detail-png'));
  clearImage(byId('detail-svg'));
  for (const id of ['detail-map', 'detail-points-access', 'detail-receipt', 'protection']) byId(id).hidden = true;
  setStatus(status, 'Loading…');
  article.focus();
  try {
    const delivery = await json(deliveryPath(reference));
    const proof = delivery.proof ? await json(`${deliveryPath(reference)}/proof`) : null;
    if (token !== openToken) return;
    showDetails(delivery, proof);
    showProtection(delivery);
    if (delivery.erased_at) {
      byId('detail-points-access').hidden = true;
      byId('detail-receipt').hidden = true;
      setStatus(status, 'This delivery was erased: its recipient, address, signer, places, signature image and points no longer exist.');
      return;
    }
    if (!proof) {
      setStatus(status, delivery.status === 'pending' ? 'No proof yet: the delivery is pending.' : `No proof: the delivery is ${delivery.status}.`);
      return;
    }
    setStatus(status, 'Loading the signature…');
    const [png, svg] = await Promise.all([blob(proof.links.png), blob(proof.links.svg)]);
    if (token !== openToken) return;
    showBlob(byId('detail-png'), png.blob);
    showBlob(byId('detail-svg'), svg.blob);
    byId('detail-figures').hidden = false;
    setStatus(status, '');
  } catch (error) {
    if (token === openToken) setStatus(status, error.message, 'error');
  }
}

function showDetails(delivery, proof) {
  const destination = delivery.destination;
  const rows = [
    ['Reference', delivery.reference],
    ['Status', delivery.status],
    ['Recipient', delivery.recipient.name],
    ['Address', delivery.address],
    ['Destination', destination ? `${destination.lat.toFixed(6)}, ${destination.lon.toFixed(6)}` : null],
    ['Created at', timeNode(delivery.created_at)],
    ['Delivered at', timeNode(delivery.delivered_at)],
    ...closureRows(delivery),
    ['Erased at', delivery.erased_at ? timeNode(delivery.erased_at) : undefined],
  ];
  if (proof) {
    const distance = formatDistance(proof.distance_to_destination_m);
    const device = proof.device ? Object.values(proof.device).filter(Boolean).join(', ') : '';
    rows.push(
      ['Signer', proof.signer.name],
      ['Captured at (device clock)', deviceTimeNode(proof.captured_at_as_sent ?? proof.captured_at)],
      ['Received at (server)', timeNode(proof.received_at)],
      ['Location', formatLocation(proof.location)],
      ['Distance to destination', distance && `${distance} (geofence ${proof.geofence_radius_m} m)`],
      ['Flags', flagsNode(proof.flags)],
      ['Ink', `${proof.ink.strokes} strokes, ${proof.ink.points} points (${proof.ink.format})`],
      ['Original upload', `${proof.original.size} bytes, ${proof.original.content_type}` +
        (proof.original.content_encoding ? `, ${proof.original.content_encoding}` : '')],
      ['Points SHA-256', mono(proof.points_sha256)],
      ['PNG SHA-256', mono(proof.png_sha256)],
      ['Uploaded by', `${proof.uploaded_by.name} (${proof.uploaded_by.role})`],
      ['Device', device || null],
      ['Proof id', mono(proof.proof_id)],
    );
  }
  fillDetails(byId('detail-details'), rows);
  showAttempts(byId('detail-attempts'), byId('detail-attempts-list'), delivery.attempts);

  const map = byId('detail-map');
  const spot = proof?.location ?? destination;
  if (spot) {
    map.href = openStreetMapURL(spot.lat, spot.lon);
    map.textContent = proof?.location ? 'Open the signing location on OpenStreetMap' : 'Open the destination on OpenStreetMap';
    map.hidden = false;
  }
  const points = byId('detail-points');
  points.dataset.reference = delivery.reference;
  byId('detail-points-access').hidden = !proof || !mayReadPoints();
  const receipt = byId('detail-receipt');
  receipt.href = `receipt.html?reference=${encodeURIComponent(delivery.reference)}`;
  receipt.hidden = !proof;
}

async function downloadPoints() {
  const reference = byId('detail-points').dataset.reference;
  const status = byId('detail-status');
  try {
    const reason = byId('detail-points-reason').value.trim();
    const query = reason ? `?reason=${encodeURIComponent(reason)}` : '';
    const file = await blob(`${deliveryPath(reference)}/proof/points${query}`);
    const extension = file.blob.type.includes('json') ? 'json' : file.blob.type.includes('xml') ? 'xml' : 'txt';
    saveBlob(file.blob, file.filename ?? `${reference}-points.${extension}`);
    setStatus(status, `Downloaded the original points (${file.blob.size} bytes).`, 'ok');
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

async function create() {
  const status = byId('create-status');
  const value = (id) => byId(id).value.trim();
  const body = { reference: value('create-reference'), recipient: { name: value('create-recipient') }, address: value('create-address') };
  const lat = value('create-lat');
  const lon = value('create-lon');
  if (lat || lon) {
    if (!lat || !lon || !Number.isFinite(Number(lat)) || !Number.isFinite(Number(lon))) {
      setStatus(status, 'Give both destination latitude and longitude in decimal degrees, or neither.', 'error');
      return;
    }
    body.destination = { lat: Number(lat), lon: Number(lon) };
  }
  const button = byId('create-submit');
  button.disabled = true;
  setStatus(status, 'Creating…');
  try {
    const delivery = await json('/v1/deliveries', { method: 'POST', body: JSON.stringify(body) });
    setStatus(status, `Delivery ${delivery.reference} is ready for a signature.`, 'ok');
    byId('create-form').reset();
    showRows([delivery], false, null);
    openDelivery(delivery.reference);
  } catch (error) {
    setStatus(status, error.message, 'error');
  } finally {
    button.disabled = false;
  }
}

/** When and why a delivery was cancelled or given up (nothing for an open or delivered one). */
function closureRows(delivery) {
  if (!delivery.closed_at) return [];
  return [[delivery.status === 'cancelled' ? 'Cancelled at' : 'Given up at', timeNode(delivery.closed_at)],
    ['Reason', delivery.close_reason]];
}
