// The console shell: sign-in, the views a role sees, and navigation between them (#capture,
// #dispatcher, #auditor). Each view is its own module, mounted the first time it is shown.
import { ApiError, json } from './api.js';
import * as auditor from './auditor.js';
import * as capture from './capture.js';
import * as dispatcher from './dispatcher.js';
import { ROLE_VIEWS, clearSession, currentSession, saveSession } from './session.js';
import { byId, el, setStatus } from './ui.js';
import * as webhooks from './webhooks.js';

const VIEWS = {
  capture: { title: 'Capture', module: capture },
  dispatcher: { title: 'Deliveries', module: dispatcher },
  auditor: { title: 'Audit', module: auditor },
  webhooks: { title: 'Webhooks', module: webhooks },
};
const mounted = new Set();

function showOnly(id) {
  for (const section of document.querySelectorAll('main > .view')) section.hidden = section.id !== id;
}

function showSignIn() {
  byId('nav').hidden = true;
  byId('who').hidden = true;
  showOnly('view-signin');
  byId('signin-key').focus();
}

function showConsole(session) {
  const nav = byId('nav');
  nav.replaceChildren(...ROLE_VIEWS[session.role].map((name) =>
    el('a', { href: `#${name}`, id: `nav-${name}`, text: VIEWS[name].title })));
  nav.hidden = false;
  byId('who-role').textContent = `Signed in: ${session.role}`;
  byId('who').hidden = false;
  route();
}

function route() {
  const session = currentSession();
  if (!session) return showSignIn();
  const allowed = ROLE_VIEWS[session.role];
  const wanted = location.hash.slice(1);
  const name = allowed.includes(wanted) ? wanted : allowed[0];
  showOnly(`view-${name}`);
  for (const link of byId('nav').querySelectorAll('a')) {
    if (link.id === `nav-${name}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${VIEWS[name].title} · Countersign console`;
  if (!mounted.has(name)) {
    mounted.add(name);
    VIEWS[name].module.mount();
  }
}

async function signIn(event) {
  event.preventDefault();
  const status = byId('app-status');
  const token = byId('signin-key').value.trim();
  if (!token) {
    setStatus(status, 'Paste an API key.', 'error');
    return;
  }
  const button = byId('signin-submit');
  button.disabled = true;
  setStatus(status, 'Checking the key…');
  // The server says what the key is: the views follow its role.
  saveSession(token, 'courier');
  let role;
  let keyId;
  try {
    const session = await json('/v1/session');
    role = session.role;
    keyId = session.key_id;
    if (!(role in ROLE_VIEWS)) throw new Error(`The server named an unknown role: ${role}.`);
  } catch (error) {
    clearSession();
    setStatus(status, signInFailure(error), 'error');
    button.disabled = false;
    byId('signin-key').focus();
    return;
  }
  saveSession(token, role, keyId);
  byId('signin-key').value = '';
  button.disabled = false;
  setStatus(status, '');
  history.replaceState(null, '', `#${ROLE_VIEWS[role][0]}`);
  showConsole(currentSession());
}

/** Why a key was not taken: on this page "sign out and sign in again" would make no sense. */
function signInFailure(error) {
  if (error instanceof ApiError && error.status === 401) {
    return 'This API key was not accepted: it is unknown, revoked or mistyped. Check it and paste it again.';
  }
  return error.message;
}

function signOut() {
  clearSession();
  // A fresh page drops every view's state and every blob: URL.
  location.replace(location.pathname);
}

byId('signin-form').addEventListener('submit', signIn);
byId('sign-out').addEventListener('click', signOut);
window.addEventListener('hashchange', route);
const session = currentSession();
if (session) showConsole(session);
else showSignIn();
keepForOffline();

/**
 * Registers sw.js, which keeps the console's files so a reload works offline (only in a secure
 * context: https or localhost). This first page was loaded before the worker ran, so it is told
 * which files that were.
 */
function keepForOffline() {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('sw.js').then(() => navigator.serviceWorker.ready).then((registration) => {
    const keep = [location.pathname, ...performance.getEntriesByType('resource').map((entry) => entry.name)];
    registration.active?.postMessage({ keep });
  }).catch((error) => console.warn('The console cannot be kept for offline use:', error));
}
