/**
 * @module The one table of error codes. Every non-payment error the service, the
 * CLI or the MCP adapter reports comes from here, in the one shape of docs/protocol.md#errors. A code is
 * never reused for another meaning; add a new row instead.
 */

export interface FieldProblem {
  /** Path of the offending field in the request, e.g. `rules[0].type`. Never the caller's value. */
  field: string;
  problem: string;
  fix: string;
}

export interface ErrorDefinition {
  status: number;
  retryable: boolean;
  /** Default message; callers may pass a more specific one (never echoing input). */
  message: string;
  next_actions: Array<Record<string, string | number>>;
}

export const ERROR_TABLE = {
  invalid_request: {
    status: 422,
    retryable: false,
    message: 'The request is not valid. See fields[] for what to fix.',
    next_actions: [{ action: 'fix_request', using: 'fields' }],
  },
  payload_too_large: {
    status: 413,
    retryable: false,
    message: 'The request body is larger than the limit.',
    next_actions: [{ action: 'reduce_payload' }],
  },
  unauthorized: {
    status: 401,
    retryable: false,
    message: 'This route needs credentials.',
    next_actions: [{ action: 'send_credentials' }],
  },
  not_found: {
    status: 404,
    retryable: false,
    message: 'No such resource.',
    next_actions: [{ action: 'check_url', using: '/openapi.json' }],
  },
  method_not_allowed: {
    status: 405,
    retryable: false,
    message: 'This method is not allowed on this route.',
    next_actions: [{ action: 'check_method', using: '/openapi.json' }],
  },
  unsupported_media_type: {
    status: 415,
    retryable: false,
    message: 'The request body must be JSON (Content-Type: application/json).',
    next_actions: [{ action: 'send_json' }],
  },
  too_complex: {
    status: 422,
    retryable: false,
    message: 'The request is over a work limit (schema size, pattern size or evaluation steps). See fields[] for the limit and what to change.',
    next_actions: [{ action: 'simplify_schema', using: 'fields' }],
  },
  verification_aborted: {
    status: 503,
    retryable: false,
    message: 'The verification was stopped at the time or memory limit of one request. Nothing was charged.',
    next_actions: [{ action: 'simplify_schema' }, { action: 'reduce_payload' }],
  },
  free_allowance_exhausted: {
    status: 429,
    retryable: true,
    message: 'The free daily allowance for this client is used up.',
    next_actions: [{ action: 'retry_after_reset' }],
  },
  internal_error: {
    status: 500,
    retryable: true,
    message: 'Internal error. Nothing was charged; try again.',
    next_actions: [{ action: 'retry' }],
  },
  unavailable: {
    status: 503,
    retryable: true,
    message: 'The service is not ready or is shutting down; try again shortly.',
    next_actions: [{ action: 'retry' }],
  },
} as const satisfies Record<string, ErrorDefinition>;

/**
 * An error code of docs/protocol.md#errors: `invalid_request`, `too_complex`, `payload_too_large`, …
 * A code is never reused for another meaning.
 *
 * @example
 * ```ts
 * import type { ErrorCode } from 'agent-output-verifier';
 *
 * const retryLater: ReadonlySet<ErrorCode> = new Set(['unavailable', 'internal_error']);
 * ```
 */
export type ErrorCode = keyof typeof ERROR_TABLE;

/** The wire shape of docs/protocol.md#errors. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  retryable: boolean;
  charged: false;
  next_actions: Array<Record<string, string | number>>;
  fields: FieldProblem[];
  retry_after?: number;
}

export interface ApiErrorOptions {
  message?: string;
  fields?: FieldProblem[];
  retryAfter?: number;
}

/**
 * An error that knows its wire form (docs/protocol.md#errors): `code`, the HTTP `status`
 * the service answers with, and `fields` naming each problem in the request with its fix.
 * parseVerificationRequest, validateRequestValue and a verifier's `evaluate` throw it.
 *
 * @example
 * ```ts
 * import { ApiError, parseVerificationRequest } from 'agent-output-verifier';
 *
 * try {
 *   parseVerificationRequest('{"task_id": 1}');
 * } catch (e) {
 *   if (e instanceof ApiError) for (const f of e.fields) console.error(`${f.field} ${f.problem}: ${f.fix}`);
 * }
 * ```
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields: FieldProblem[];
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    super(options.message ?? ERROR_TABLE[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_TABLE[code].status;
    this.fields = options.fields ?? [];
    this.retryAfter = options.retryAfter;
  }

  toBody(): ErrorBody {
    return errorBody(this.code, { message: this.message, fields: this.fields, retryAfter: this.retryAfter });
  }
}

export function errorBody(code: ErrorCode, options: ApiErrorOptions = {}): ErrorBody {
  const def: ErrorDefinition = ERROR_TABLE[code];
  const body: ErrorBody = {
    code,
    message: options.message ?? def.message,
    status: def.status,
    retryable: def.retryable,
    charged: false,
    next_actions: def.next_actions.map((a) => ({ ...a })),
    fields: options.fields ?? [],
  };
  if (def.retryable) body.retry_after = options.retryAfter ?? 1;
  return body;
}

/** Shorthand for the most common error: a 422 with field problems. */
export function invalidRequest(fields: FieldProblem[], message?: string): ApiError {
  return new ApiError('invalid_request', { fields, message });
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
