// The Fastify application as routes see it, and a module's routes as a typed plugin: each module's routes take the
// services they use as their plugin options (no context bag), bound once by `mount` when the process is assembled.
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';

/** The Fastify application (app.ts builds it) as routes see it: TypeBox schemas type their requests. */
export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A module's routes: a Fastify plugin whose options are the services it uses. */
export type RoutePlugin<Options extends object> = FastifyPluginAsyncTypebox<Options>;

/** A module's routes bound to their services, registered on the application by buildApp. */
export type Mount = (app: App) => Promise<void>;

export function mount<Options extends object>(plugin: RoutePlugin<Options>, options: Options): Mount {
  return async (app) => {
    await app.register(plugin, options);
  };
}
