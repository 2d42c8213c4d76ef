import { CodedError } from '../workflow/errors.js';

/**
 * The read API's failures: one stable code per kind, the HTTP status it is answered with,
 * and a message that names what was wrong. Bodies are always `{ code, message }` as JSON.
 */
export type ApiErrorCode =
  | 'unauthenticated'
  | 'forbidden'
  | 'invalid_parameter'
  | 'not_found'
  | 'method_not_allowed'
  | 'auth_unavailable'
  | 'archive_unavailable'
  /** The view server: the action does not fit the object's state (retry of a run not Failed). */
  | 'conflict'
  /** The view server: the Kubernetes API failed or its caches are not synced yet. */
  | 'kube_unavailable'
  | 'internal';

const STATUS: Record<ApiErrorCode, number> = {
  unauthenticated: 401,
  forbidden: 403,
  invalid_parameter: 400,
  not_found: 404,
  method_not_allowed: 405,
  auth_unavailable: 503,
  archive_unavailable: 503,
  conflict: 409,
  kube_unavailable: 503,
  internal: 500,
};

export class ApiError extends CodedError<ApiErrorCode> {
  readonly status: number;
  /** The query parameter at fault, for invalid_parameter. */
  readonly parameter: string | undefined;
  constructor(code: ApiErrorCode, message: string, parameter?: string) {
    super('ApiError', code, message);
    this.status = STATUS[code];
    this.parameter = parameter;
  }
}

export const badParameter = (parameter: string, why: string): ApiError =>
  new ApiError('invalid_parameter', `query parameter ${parameter}: ${why}`, parameter);
