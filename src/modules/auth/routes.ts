import type { RoutePlugin } from '../../http/app-types.js';
import { ApiError } from '../../wire/api-error.js';
import { createTemporaryKeySchema } from './schemas.js';
import type { AuthService } from './service.js';

export interface AuthRoutesOptions {
  auth: AuthService;
}

export const authRoutes: RoutePlugin<AuthRoutesOptions> = async (app, { auth }) => {
  app.post(
    '/v1/auth/temporary-api-key',
    {
      schema: createTemporaryKeySchema,
      // The permission depends on usage_type, so the service checks it; the guard authenticates and counts.
      config: { guard: { permission: null, rate: 'temporary_api_key' } },
      // A bodyless POST reaches validation as "body required", not as a generic type error.
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null)
          throw new ApiError('invalid_request', 'Invalid request: body is required.', {
            validationErrors: [
              { error_type: 'missing', location: 'usage_type', message: 'is required' },
              { error_type: 'missing', location: 'expires_in_seconds', message: 'is required' },
            ],
          });
      },
    },
    async (req, reply) => reply.code(201).send(await auth.createTemporaryKey(req.auth, req.body)),
  );

  // The web console's sign-in (AuthService.createPlaygroundSession). Not part of the public API. Browsers stamp
  // Sec-Fetch-Site themselves (page scripts cannot set it), so another web page cannot open a session with a key it
  // got hold of, and API clients never get the playground label by accident.
  app.post(
    '/v1/auth/playground-session',
    { schema: { hide: true }, config: { guard: { permission: null, rate: 'temporary_api_key' } } },
    async (req, reply) => {
      if (req.headers['sec-fetch-site'] !== 'same-origin')
        throw new ApiError('permission_denied', 'Console sessions are opened by the Parlance web console, from its own origin.');
      return reply.code(201).send(await auth.createPlaygroundSession(req.auth));
    },
  );
};
