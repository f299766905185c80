// The admin's webhooks view: register an endpoint (its secret is shown once), pause / resume,
// rotate the secret, send a test, delete, and see each endpoint's deliveries with every attempt.
// docs/webhooks.md describes the API behind it.
import { json, request } from './api.js';
import { byId, el, setStatus } from './ui.js';

const EVENTS = ['delivery.created', 'delivery.delivered', 'delivery.attempt_failed', 'delivery.cancelled'];

export function mount() {
  const events = byId('webhook-events');
  events.replaceChildren(...EVENTS.map((name) => el('label', { class: 'check' },
    el('input', { type: 'checkbox', name: 'events', value: name, checked: name === 'delivery.created' || name === 'delivery.delivered' }),
    ` ${name}`)));
  byId('webhook-form').addEventListener('submit', register);
  byId('webhook-refresh').addEventListener('click', load);
  load();
}

async function register(event) {
  event.preventDefault();
  const status = byId('webhook-status');
  const url = byId('webhook-url').value.trim();
  const description = byId('webhook-description').value.trim();
  const events = [...document.querySelectorAll('#webhook-events input:checked')].map((input) => input.value);
  setStatus(status, 'Registering…');
  try {
    const created = await json('/v1/webhooks', { method: 'POST', body: JSON.stringify({ url, events, description }) });
    showSecret(created.secret, 'Registered. Copy the signing secret now: it is shown only this once.');
    setStatus(status, '', 'ok');
    byId('webhook-form').reset();
    await load();
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

function showSecret(secret, text) {
  const box = byId('webhook-secret');
  box.replaceChildren(el('p', { text }), el('code', { text: secret }));
  box.hidden = false;
}

async function load() {
  const status = byId('webhook-list-status');
  const list = byId('webhook-list');
  setStatus(status, 'Loading…');
  try {
    const page = await json('/v1/webhooks');
    list.replaceChildren(...page.items.map(endpointCard));
    setStatus(status, page.items.length ? '' : 'No webhooks yet.');
  } catch (error) {
    setStatus(status, error.message, 'error');
  }
}

function endpointCard(endpoint) {
  const path = `/v1/webhooks/${encodeURIComponent(endpoint.id)}`;
  const status = el('p', { class: 'status', role: 'status' });
  const deliveries = el('div', { class: 'webhook-deliveries' });
  const state = endpoint.enabled ? 'enabled'
    : endpoint.disabled_reason === 'failing' ? `disabled after failing since ${endpoint.failing_since ?? '?'}` : 'paused';
  const act = (label, action) => {
    const button = el('button', { type: 'button', text: label });
    button.addEventListener('click', async () => {
      button.disabled = true;
      try { await action(); } catch (error) { setStatus(status, error.message, 'error'); }
      button.disabled = false;
    });
    return button;
  };
  return el('section', { class: 'card webhook', 'data-id': endpoint.id },
    el('h4', { text: endpoint.url }),
    el('p', { text: `${endpoint.description || 'No description'} · ${endpoint.events.join(', ')} · ${state}` }),
    el('div', { class: 'actions' },
      act(endpoint.enabled ? 'Pause' : 'Enable', async () => {
        await json(path, { method: 'PATCH', body: JSON.stringify({ enabled: !endpoint.enabled }) });
        await load();
      }),
      act('Send test', async () => {
        await request(`${path}/test`, { method: 'POST' });
        setStatus(status, 'Test event queued.', 'ok');
      }),
      act('Rotate secret', async () => {
        let rotated;
        try {
          rotated = await json(`${path}/rotate-secret`, { method: 'POST' });
        } catch (error) {
          // The last rotation's previous secret still signs: rotating again stops it now, only on purpose.
          if (error.code !== 'webhook_rotation_in_progress') throw error;
          if (!confirm(`${error.problem?.detail ?? error.message}\n\nRotate anyway, stopping that older secret now?`)) return;
          rotated = await json(`${path}/rotate-secret`, { method: 'POST', body: JSON.stringify({ force: true }) });
        }
        showSecret(rotated.secret, `New secret; the old one also signs until ${rotated.previous_secret_valid_until}.`);
      }),
      act('Deliveries', async () => showDeliveries(deliveries, path)),
      act('Delete', async () => {
        if (!confirm(`Delete the webhook to ${endpoint.url}?`)) return;
        await request(path, { method: 'DELETE' });
        await load();
      })),
    status, deliveries);
}

async function showDeliveries(container, path) {
  const page = await json(`${path}/deliveries?limit=20`);
  if (!page.items.length) {
    container.replaceChildren(el('p', { text: 'No deliveries yet.' }));
    return;
  }
  const rows = page.items.map((delivery) => {
    const last = delivery.attempts.at(-1);
    const retry = el('button', { type: 'button', text: 'Retry' });
    retry.addEventListener('click', async () => {
      retry.disabled = true;
      await request(`${path}/deliveries/${encodeURIComponent(delivery.id)}/retry`, { method: 'POST' });
      await showDeliveries(container, path);
    });
    return el('tr', {},
      el('td', { text: delivery.event_type }), el('td', { text: delivery.state }),
      el('td', { text: String(delivery.attempt_count) }),
      el('td', { text: last ? `${last.status_code ?? '—'} in ${last.latency_ms} ms${last.error ? ` (${last.error})` : ''}` : '—' }),
      el('td', { text: last?.attempted_at ?? '—' }), el('td', {}, retry));
  });
  container.replaceChildren(el('table', {},
    el('thead', {}, el('tr', {}, ...['Event', 'State', 'Attempts', 'Last answer', 'Last attempt', ''].map((text) => el('th', { text })))),
    el('tbody', {}, ...rows)));
}
