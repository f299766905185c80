// Auditor: audit events with filters and paging, verification of the hash chains, the signed
// checkpoint of every chain's head (compared with the verified heads) and proof exports.
import { ApiError, blob, json } from './api.js';
import { byId, dayStart, el, fillDetails, mono, saveBlob, setStatus, timeNode, todayValue } from './ui.js';

let filters = new URLSearchParams();
let cursors = [null];  // cursors[i] opens page i; cursors[0] is the first page
let pageIndex = 0;
let lastVerification = null;

export function mount() {
  byId('verify-run').addEventListener('click', verify);
  byId('checkpoint-load').addEventListener('click', loadCheckpoint);
  byId('export-form').addEventListener('submit', (event) => {
    event.preventDefault();
    exportProofs();
  });
  byId('events-form').addEventListener('submit', (event) => {
    event.preventDefault();
    applyFilters();
  });
  byId('events-first').addEventListener('click', () => showPage(0));
  byId('events-previous').addEventListener('click', () => showPage(pageIndex - 1));
  byId('events-next').addEventListener('click', () => showPage(pageIndex + 1));
  byId('export-since').value = todayValue(-30);
  byId('export-until').value = todayValue();
  applyFilters();
  loadCheckpoint();
}

function missingEndpoint(error, what) {
  return error instanceof ApiError && error.status === 404 && error.code !== 'proof_not_found'
    ? `This server does not offer ${what} yet (404).`
    : error.message;
}

async function verify() {
  const status = byId('verify-status');
  const button = byId('verify-run');
  button.disabled = true;
  byId('verify-details').replaceChildren();
  setStatus(status, 'Verifying every chain and re-hashing every proof…');
  try {
    const result = await json('/v1/audit/verify');
    lastVerification = result;
    if (result.status === 'ok') {
      const chains = result.chains ?? [];
      setStatus(status, `Chains intact: ${result.count} events verified in ${chains.length} chains.`, 'ok');
      fillDetails(byId('verify-details'), [
        ['Events', String(result.count)], ['Chain heads', headsNode(chains)],
        ['Archived proofs', result.archived_proofs ? `${result.archived_proofs} (gone by retention: check their bundles)` : undefined],
      ]);
    } else {
      setStatus(status, `Chain BROKEN at event ${result.seq}: ${result.kind}.`, 'error');
      fillDetails(byId('verify-details'), [
        ['Event', String(result.seq)], ['Chain', result.chain === undefined ? null : String(result.chain)],
        ['Kind', result.kind], ['Subject', result.subject ?? null],
        ['Proof id', result.proof_id ? mono(result.proof_id) : null],
        ['Expected', result.expected ? mono(result.expected) : null], ['Found', result.found ? mono(result.found) : null],
      ]);
    }
    compareCheckpoint();
  } catch (error) {
    setStatus(status, error.message, 'error');
  } finally {
    button.disabled = false;
  }
}

let checkpoint = null;

async function loadCheckpoint() {
  const status = byId('checkpoint-status');
  setStatus(status, 'Loading…');
  try {
    checkpoint = await json('/v1/audit/checkpoint');
    const heads = checkpoint.chains
      ? [['Chain heads', headsNode(checkpoint.chains)]]
      : [['Head hash', mono(checkpoint.head_hash)]];
    fillDetails(byId('checkpoint-details'), [
      ['Newest event', String(checkpoint.seq)],
      ...heads,
      ['Signed at', timeNode(checkpoint.signed_at)],
      ['Algorithm', checkpoint.algorithm],
      ['Signature', mono(checkpoint.signature)],
      ['Public key', mono(checkpoint.public_key)],
      ...(checkpoint.key_id ? [['Key id', mono(checkpoint.key_id)]] : []),
    ]);
    setStatus(status, '');
    compareCheckpoint();
  } catch (error) {
    checkpoint = null;
    byId('checkpoint-details').replaceChildren();
    setStatus(status, missingEndpoint(error, 'signed checkpoints'), 'error');
  }
}

/**
 * One line per chain with events: "chain 3: event 1042 · 5e73f2634211…" (the full hash in the
 * tooltip and in the copied text), then how many chains are still empty.
 */
function headsNode(chains) {
  const used = chains.filter((head) => head.head_seq > 0);
  const list = el('div', { class: 'chain-heads' });
  for (const head of used) {
    list.append(el('div', {}, `chain ${head.chain}: event ${head.head_seq} · `,
      el('code', { text: `${head.head_hash.slice(0, 12)}…`, title: head.head_hash })));
  }
  const empty = chains.length - used.length;
  if (empty > 0) list.append(el('div', { text: `${empty} chain${empty === 1 ? '' : 's'} without events` }));
  return list;
}

/**
 * Compares the signed checkpoint with the verified chains, chain by chain: where a chain's verified
 * head is the signed one, the hashes must agree. A chain with newer events cannot be compared here
 * (verification checks every stored checkpoint against the chains anyway).
 */
function compareCheckpoint() {
  if (!checkpoint?.chains || lastVerification?.status !== 'ok') return;
  const verified = new Map((lastVerification.chains ?? []).map((head) => [head.chain, head]));
  let matching = 0;
  let moved = 0;
  for (const head of checkpoint.chains) {
    const now = verified.get(head.chain);
    if (now && now.head_seq === head.head_seq) {
      if (now.head_hash !== head.head_hash) {
        setStatus(byId('checkpoint-status'), `Chain ${head.chain}: the verified head DIFFERS from the signed checkpoint.`, 'error');
        return;
      }
      matching += 1;
    } else {
      moved += 1;
    }
  }
  setStatus(byId('checkpoint-status'), moved === 0
    ? `The verified chains end at this checkpoint: all ${matching} heads match.`
    : `${matching} chain heads match the checkpoint; ${moved} chains have newer events (load the current checkpoint to compare them).`,
  moved === 0 ? 'ok' : 'info');
}

async function exportProofs() {
  const status = byId('export-status');
  const since = byId('export-since').value;
  const until = byId('export-until').value;
  const format = byId('export-format').value;
  if (!since || !until || until < since) {
    setStatus(status, 'Choose a period: "From" on or before "To".', 'error');
    return;
  }
  const query = new URLSearchParams({ since: dayStart(since), until: dayStart(until, 1), format });
  const button = byId('export-submit');
  button.disabled = true;
  setStatus(status, 'Preparing the export…');
  try {
    const file = await blob(`/v1/exports/proofs?${query}`);
    const name = file.filename ?? `countersign-proofs-${since}-to-${until}.${format}`;
    saveBlob(file.blob, name);
    setStatus(status, `Downloaded ${name} (${file.blob.size} bytes).`, 'ok');
  } catch (error) {
    setStatus(status, missingEndpoint(error, 'proof exports'), 'error');
  } finally {
    button.disabled = false;
  }
}

function applyFilters() {
  filters = new URLSearchParams({ limit: byId('events-limit').value });
  const since = byId('events-since').value;
  const until = byId('events-until').value;
  if (since) filters.set('since', dayStart(since));
  if (until) filters.set('until', dayStart(until, 1));
  for (const name of ['action', 'subject', 'actor']) {
    const value = byId(`events-${name}`).value.trim();
    if (value) filters.set(name, value);
  }
  cursors = [null];
  showPage(0);
}

async function showPage(index) {
  const status = byId('events-status');
  const query = new URLSearchParams(filters);
  if (cursors[index]) query.set('cursor', cursors[index]);
  setStatus(status, 'Loading events…');
  try {
    const page = await json(`/v1/audit/events?${query}`);
    pageIndex = index;
    cursors.length = index + 1;
    if (page.next_cursor) cursors.push(page.next_cursor);
    showEvents(page.items);
    const first = page.items[0]?.seq;
    const last = page.items.at(-1)?.seq;
    setStatus(status, page.items.length === 0 ? 'No events match.' : `Page ${index + 1}: events ${first} to ${last}.`);
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
  byId('events-first').disabled = pageIndex === 0;
  byId('events-previous').disabled = pageIndex === 0;
  byId('events-next').disabled = cursors.length <= pageIndex + 1;
}

/** An event's details, one `name: value` per line; long digests shortened (the full value in the tooltip). */
function detailsNode(details) {
  const lines = Object.entries(details ?? {}).map(([name, value]) => {
    const text = String(value);
    const short = text.length > 20 ? `${text.slice(0, 12)}…` : text;
    return el('div', { text: `${name}: ${short}`, title: text });
  });
  return lines.length > 0 ? el('div', {}, ...lines) : '—';
}

function showEvents(items) {
  const table = byId('events-table');
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const event of items) {
    const actor = event.actor ? `${event.actor.role} ${event.actor.key_id ? event.actor.key_id.slice(0, 8) : ''}`.trim() : 'system';
    const hash = el('code', { text: `${event.hash.slice(0, 12)}…`, title: event.hash });
    body.append(el('tr', {},
      el('td', { text: String(event.seq) }),
      el('td', { text: event.chain === undefined ? '' : String(event.chain), title: event.encoding ?? '' }),
      el('td', {}, timeNode(event.occurred_at)),
      el('td', { text: actor, title: event.actor?.key_id ?? '' }),
      el('td', { text: event.action }),
      el('td', { text: event.subject }),
      el('td', { class: 'mono' }, detailsNode(event.details)),
      el('td', {}, hash)));
  }
  table.hidden = items.length === 0;
}
