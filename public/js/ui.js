// DOM and formatting helpers shared by the views. Text always goes in through textContent.

export const byId = (id) => document.getElementById(id);

/** Shows `text` in a status line; kind is 'info', 'ok' or 'error'. An empty text hides the line. */
export function setStatus(element, text, kind = 'info') {
  element.textContent = text ?? '';
  element.classList.toggle('error', kind === 'error');
  element.classList.toggle('ok', kind === 'ok');
}

/** A new element with attributes (`text` sets textContent) and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name === 'class') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== undefined && child !== null) node.append(child);
  }
  return node;
}

/** Replaces a <dl>'s content with label/value rows; a value may be a string, a Node or null ("—"). */
export function fillDetails(list, rows) {
  list.replaceChildren();
  for (const [label, value] of rows) {
    if (value === undefined) continue;
    list.append(el('dt', { text: label }), el('dd', {}, value === null || value === '' ? '—' : value));
  }
}

/** A monospace, selectable value (digests, ids). */
export const mono = (text) => el('code', { text });

/** Flags as little badges, or "none". */
export function flagsNode(flags) {
  if (!flags || flags.length === 0) return 'none';
  const span = el('span');
  for (const flag of flags) span.append(el('span', { class: 'flag', text: flag }), ' ');
  return span;
}

export function formatDistance(metres) {
  if (metres === null || metres === undefined) return null;
  return metres >= 1000 ? `${(metres / 1000).toFixed(2)} km` : `${metres.toFixed(1)} m`;
}

export function formatLocation(location) {
  if (!location) return null;
  const accuracy = location.accuracy_m === null || location.accuracy_m === undefined ? '' : ` (±${Math.round(location.accuracy_m)} m)`;
  return `${location.lat.toFixed(6)}, ${location.lon.toFixed(6)}${accuracy}`;
}

/**
 * A time in the viewer's zone with its offset, to the second (2025-03-01 14:05:09 +01:00), in a
 * <time> element whose datetime and tooltip keep the exact text the server sent.
 */
export function timeNode(text) {
  if (!text) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return el('time', { text });
  return el('time', { datetime: text, title: text, text: localTime(date) });
}

/** `2025-03-01 14:05:09 +01:00`: the viewer's local time, to the second, with the offset. */
export function localTime(date) {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())} ${sign}${pad(offset / 60)}:${pad(offset % 60)}`;
}

/**
 * A time the device sent with its own offset: shown in the viewer's zone, plus the device's own
 * wall-clock reading when its offset differs (that offset is part of the evidence).
 */
export function deviceTimeNode(text) {
  const node = timeNode(text);
  const offset = /([+-]\d\d:\d\d|Z)$/.exec(text ?? '')?.[1];
  if (!node || !offset) return node;
  const date = new Date(text);
  const viewer = localTime(date).slice(-6);
  const device = offset === 'Z' ? '+00:00' : offset;
  if (device === viewer) return node;
  const clock = /T(\d\d:\d\d:\d\d)/.exec(text)?.[1] ?? '';
  return el('span', {}, node, ` (device clock ${clock} ${device})`);
}

export function openStreetMapURL(lat, lon) {
  const a = lat.toFixed(6);
  const o = lon.toFixed(6);
  return `https://www.openstreetmap.org/?mlat=${a}&mlon=${o}#map=18/${a}/${o}`;
}

const pad = (n, width = 2) => String(Math.trunc(Math.abs(n))).padStart(width, '0');

/** RFC 3339 in the device's local time with its offset, e.g. 2025-03-01T14:05:09.250+01:00. */
export function localRFC3339(date) {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(offset / 60)}:${pad(offset % 60)}`;
}

/** Local midnight at the start of a `YYYY-MM-DD` date input, as RFC 3339; `daysLater` moves it. */
export function dayStart(value, daysLater = 0) {
  const [year, month, day] = value.split('-').map(Number);
  return localRFC3339(new Date(year, month - 1, day + daysLater));
}

/** Today as a `YYYY-MM-DD` value for date inputs (local time). */
export function todayValue(daysLater = 0) {
  const now = new Date();
  const date = new Date(now.getFullYear(), now.getMonth(), now.getDate() + daysLater);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * Shows a Blob in an <img>, releasing the previous blob: URL of that image. When the image sits in
 * a link, the link gets the same URL: the API needs the Authorization header, which a plain URL
 * in a new tab would not send, so the tab opens the bytes this page already fetched.
 */
export function showBlob(image, blob) {
  if (image.src.startsWith('blob:')) URL.revokeObjectURL(image.src);
  image.src = URL.createObjectURL(blob);
  image.closest('a')?.setAttribute('href', image.src);
}

export function clearImage(image) {
  if (image.src.startsWith('blob:')) URL.revokeObjectURL(image.src);
  image.removeAttribute('src');
  image.closest('a')?.removeAttribute('href');
}

/** Offers a Blob as a download under `filename`. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Hex SHA-256 of bytes, or null where WebCrypto is unavailable (plain http on another host). */
export async function sha256Hex(bytes) {
  if (!globalThis.crypto?.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A reference as the API accepts it. */
export const REFERENCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
