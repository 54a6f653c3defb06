// The `parlance` program: its subcommands, and how a failed one exits (2 for a configuration, tenancy or model
// error, in one line; 1 with the stack for anything else).
import { Command } from 'commander';
import { ConfigError } from '../config/settings.js';
import { ModelManifestError } from '../engines/model-dir/manifest.js';
import { PullError } from '../engines/model-dir/pull.js';
import { packageVersion } from '../lib/version.js';
import { TenancyError } from '../modules/tenancy/service.js';
import { adminBillingCommands } from './admin-billing-commands.js';
import { adminCommands } from './admin-commands.js';
import { modelsCommands } from './models-commands.js';
import { serveCommand } from './serve-command.js';

const program = new Command('parlance')
  .description('Self-hosted speech-to-text and text-to-speech API server')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError();

serveCommand(program);
adminBillingCommands(adminCommands(program));
modelsCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof TenancyError || err instanceof PullError || err instanceof ModelManifestError) {
    process.stderr.write(`parlance: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`parlance: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
