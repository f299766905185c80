// The signed-in key and its role (from GET /v1/session), kept for this tab only (sessionStorage).

const STORAGE_KEY = 'countersign.console.session';

/**
 * The views each role sees, in navigation order (auditors see deliveries read-only, to open
 * receipts). The server still checks every request.
 */
export const ROLE_VIEWS = {
  courier: ['capture'],
  dispatcher: ['dispatcher', 'capture'],
  auditor: ['auditor', 'dispatcher'],
  admin: ['dispatcher', 'capture', 'auditor', 'webhooks'],
};

/** `{token, role, keyId}` or null when nobody is signed in (keyId: the key's id from GET /v1/session). */
export function currentSession() {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
    if (value && typeof value.token === 'string' && value.role in ROLE_VIEWS) return value;
  } catch {
    // A damaged entry is the same as none.
  }
  return null;
}

export function saveSession(token, role, keyId = null) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token, role, keyId }));
}

export function clearSession() {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** Whether the signed-in role may create deliveries (dispatcher, admin). */
export function mayCreateDeliveries() {
  return ['dispatcher', 'admin'].includes(currentSession()?.role);
}

/**
 * Whether the signed-in role may read a proof's raw dynamics (auditor, admin: `read_points`):
 * dispatchers see the signature's image only.
 */
export function mayReadPoints() {
  return ['auditor', 'admin'].includes(currentSession()?.role);
}
