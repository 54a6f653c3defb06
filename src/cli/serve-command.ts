// `parlance serve`: start the server, print the first-start key and the address, stop on SIGINT/SIGTERM.
import type { Command } from 'commander';
import { type CommonOpts, type SettingFlags, settingsFrom, withCommon } from './common.js';

export function serveCommand(program: Command): void {
  withCommon(program.command('serve').description('run the API server and workers'))
    .option('--port <port>', 'port (PARLANCE_PORT)')
    .option('--host <host>', 'bind address (PARLANCE_HOST)')
    .option('--tts-port <port>', 'also serve text-to-speech alone on this port (PARLANCE_TTS_PORT)')
    .option('--role <role>', 'what this node runs: all (default), api or worker (PARLANCE_ROLE)')
    .action(async (opts: CommonOpts & SettingFlags) => {
      const settings = settingsFrom(opts);
      // Loaded here, not at the top: admin commands need none of the HTTP stack or the engines.
      const { startServer } = await import('../server.js');
      const server = await startServer(settings);
      if (server.bootstrap) {
        const b = server.bootstrap;
        process.stdout.write(
          [
            'First start: created an organization, a project and an API key.',
            `  organization_id: ${b.organization_id}`,
            `  project_id:      ${b.project_id}`,
            `  api_key:         ${b.api_key}`,
            'The key is shown only this once; store it now (`parlance admin create-key` issues more).',
            '',
          ].join('\n'),
        );
      }
      if (server.ttsUrl) process.stdout.write(`Parlance TTS listening on ${server.ttsUrl}\n`);
      if (server.wyomingUrl) process.stdout.write(`Parlance Wyoming listening on ${server.wyomingUrl}\n`);
      const role = settings.role === 'all' ? '' : `, role ${settings.role}`;
      process.stdout.write(`Parlance listening on ${server.url} (data dir ${settings.dataDir}, ${server.ctx.db.dialect}${role})\n`);
      // The first signal drains live sessions and requests (PARLANCE_SHUTDOWN_DRAIN_SECONDS); a second one stops at once.
      const hurry = new AbortController();
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) {
          process.stderr.write(`received ${signal} again, closing what is left now\n`);
          return hurry.abort();
        }
        stopping = true;
        process.stderr.write(`received ${signal}, shutting down\n`);
        await server.close({ drainMs: settings.shutdownDrainSeconds * 1000, hurry: hurry.signal });
        process.exit(0);
      };
      process.on('SIGINT', () => void stop('SIGINT'));
      process.on('SIGTERM', () => void stop('SIGTERM'));
    });
}
