import type { Argv } from 'yargs';
import { describeConfig, configToJson } from '../../config/load-config.js';
import { loadCredentials } from '../../config/secure-config.js';
import { configOption } from '../config-option.js';
import { loadCliConfig } from '../load-cli-config.js';
import { checkGerritEventsDir } from '../store-path-check.js';
import { seeHelp } from './see-help.js';

export function configCommand(cli: Argv): Argv {
  return cli.command('config', 'configuration commands', (config) =>
    config
      .fail(seeHelp('config'))
      .command(
        'check',
        "load replication.config and report every problem at once (exit 3 when invalid, or when storePath is Gerrit's replication events directory)",
        (y) =>
          y
            .fail(seeHelp('config check'))
            .options({ ...configOption, json: { type: 'boolean', default: false, describe: 'machine-readable output' } })
            .example('refrelay config check --config /etc/refrelay/replication.config', ''),
        async (args) => {
          const config = loadCliConfig({ config: args.config });
          for (const warning of config.warnings) process.stderr.write(`warning: ${warning.file}: ${warning.key}: ${warning.message}\n`);
          const gerritFiles = await checkGerritEventsDir(config);
          if (gerritFiles !== undefined) process.stderr.write(`warning: ${gerritFiles}\n`);
          // The secure file is checked too (permissions, syntax); only remote names are shown.
          const credentials = loadCredentials(config).remotes;
          if (args.json) process.stdout.write(`${JSON.stringify({ ...configToJson(config), credentialsFor: credentials }, null, 2)}\n`);
          else process.stdout.write(`${describeConfig(config)}credentials (secure.config): ${credentials.length === 0 ? 'none' : credentials.join(', ')}\n`);
        },
      )
      .demandCommand(1, 'name a config command')
      .example('refrelay config check --config /etc/refrelay/replication.config', ''),
  );
}
