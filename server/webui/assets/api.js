// The REST API of docs/API.md, read from the page's own origin.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function call(method, path) {
  const resp = await fetch(path, { method, headers: { Accept: 'application/json' } });
  let body = {};
  try {
    body = await resp.json();
  } catch {
    // a body that is not JSON: the status says what happened
  }
  if (!resp.ok) {
    throw new ApiError(resp.status, body.error || `${method} ${path}: ${resp.status} ${resp.statusText}`);
  }
  return body;
}

const job = (id) => `/api/v1/jobs/${encodeURIComponent(id)}`;

export const listJobs = () => call('GET', '/api/v1/jobs');
export const getJob = (id) => call('GET', job(id));
export const getCheckpoints = (id) => call('GET', `${job(id)}/checkpoints`);
export const getExceptions = (id) => call('GET', `${job(id)}/exceptions`);
export const stopJob = (id, savepoint) => call('POST', `${job(id)}/stop${savepoint ? '?savepoint=true' : ''}`);
