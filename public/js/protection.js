// A delivery's data protection (auditor, admin): its legal hold, and erasing its personal data
// (admin). Both go through the API's own rules: a hold blocks erasure (409 legal_hold), a pending
// delivery must be cancelled first (409 delivery_pending); every change is an audit event.
import { ApiError, deliveryPath, json, request } from './api.js';
import { currentSession } from './session.js';
import { byId, setStatus, timeNode } from './ui.js';

let reference = null;
let reload = () => {};

/** Wires the panel's buttons; `reopen(reference)` shows the delivery again after a change. */
export function mountProtection(reopen) {
  reload = reopen;
  byId('protection-hold-set').addEventListener('click', () => change('PUT', 'Placing the legal hold…'));
  byId('protection-hold-clear').addEventListener('click', () => change('DELETE', 'Clearing the legal hold…'));
  byId('protection-erase').addEventListener('click', () => {
    byId('protection-erase-confirm').hidden = false;
    byId('protection-erase-yes').focus();
  });
  byId('protection-erase-no').addEventListener('click', () => {
    byId('protection-erase-confirm').hidden = true;
    byId('protection-erase').focus();
  });
  byId('protection-erase-yes').addEventListener('click', erase);
}

/** Shows the panel for `delivery` when the signed-in role may act on it (auditor, admin). */
export async function showProtection(delivery) {
  const panel = byId('protection');
  const role = currentSession()?.role;
  reference = delivery.reference;
  byId('protection-erase-confirm').hidden = true;
  panel.hidden = !['auditor', 'admin'].includes(role) || Boolean(delivery.erased_at);
  if (panel.hidden) return;
  const status = byId('protection-status');
  setStatus(status, 'Reading the legal hold…');
  let hold = null;
  try {
    hold = await json(`${deliveryPath(reference)}/legal-hold`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) {
      setStatus(status, error.message, 'error');
      return;
    }
  }
  if (reference !== delivery.reference) return;
  if (hold) {
    setStatus(status, '');
    status.replaceChildren('Under a legal hold since ', timeNode(hold.held_at), `: ${hold.reason}. It cannot be erased.`);
  } else {
    setStatus(status, delivery.status === 'pending'
      ? 'No legal hold. A pending delivery is cancelled before it can be erased.'
      : 'No legal hold.');
  }
  byId('protection-hold-set').hidden = Boolean(hold);
  byId('protection-hold-clear').hidden = !hold;
  byId('protection-erase').hidden = role !== 'admin' || Boolean(hold) || delivery.status === 'pending';
}

/** The reason typed, or null after saying one is needed. */
function reason() {
  const text = byId('protection-reason').value.trim();
  if (!text) {
    setStatus(byId('protection-status'), 'Give a reason first: a case or ticket number, never a name (it stays in the audit trail).', 'error');
    byId('protection-reason').focus();
    return null;
  }
  return text;
}

async function change(method, pending) {
  const status = byId('protection-status');
  const body = method === 'PUT' ? reason() : null;
  if (method === 'PUT' && body === null) return;
  setStatus(status, pending);
  try {
    // PUT answers the hold; DELETE answers 204 with no body.
    await request(`${deliveryPath(reference)}/legal-hold`, method === 'PUT'
      ? { method, body: JSON.stringify({ reason: body }) } : { method });
    byId('protection-reason').value = '';
    await reload(reference);
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

async function erase() {
  const status = byId('protection-status');
  const text = reason();
  byId('protection-erase-confirm').hidden = true;
  if (text === null) return;
  setStatus(status, 'Erasing…');
  try {
    await json(`${deliveryPath(reference)}/erase`, { method: 'POST', body: JSON.stringify({ reason: text }) });
    byId('protection-reason').value = '';
    await reload(reference);
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}
