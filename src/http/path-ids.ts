/**
 * @module The id rule for values taken from URL paths, on every route that has a
 * path parameter (`:agent_id`, `:verification_id`, a `*` tail…), checked once here
 * rather than per route, so a route added later is covered too. A path value passes
 * the same character rule as an id in a body (no control character, no lone
 * surrogate) before any route or store sees it: PostgreSQL refuses a NUL in text,
 * and an answer must never depend on which store is behind the service.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { idCharactersProblem, identifierProblem } from '../core/request.js';
import { ApiError, invalidRequest } from '../errors.js';

/** Not-found messages of the resources a path names by id (the default one otherwise). */
const NOT_FOUND_MESSAGES: Record<string, string> = { verification_id: 'No verification with this id.' };

/**
 * The error a path parameter earns, or null: an agent id breaks the request rule
 * (422, as in a body); any other value names a resource that cannot exist (404).
 */
export function pathParamError(name: string, value: string): ApiError | null {
  if (name === 'agent_id') {
    const problem = identifierProblem('agent_id', value);
    return problem === null ? null : invalidRequest([problem]);
  }
  if (idCharactersProblem(value) === null) return null;
  return new ApiError('not_found', { message: NOT_FOUND_MESSAGES[name] });
}

function checkPathParams(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const params = request.params as Record<string, string>;
  for (const name in params) {
    const error = pathParamError(name, params[name] as string);
    if (error !== null) return done(error);
  }
  done();
}

/** Puts the check first among the onRequest hooks of every route registered afterwards that has path parameters. */
export function checkPathIds(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    // Only routes with parameters pay for the check.
    if (!route.url.includes(':') && !route.url.includes('*')) return;
    const own = route.onRequest;
    const hooks: onRequestHookHandler[] = own === undefined ? [] : Array.isArray(own) ? [...own] : [own];
    route.onRequest = [checkPathParams as onRequestHookHandler, ...hooks];
  });
}
