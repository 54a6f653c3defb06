// Models users brought (the models directory, engines/model-dir) in the public catalog: the public ids each STT model
// claims (`stt-async-v4`, ...), taken over from the built-in models (the engines offer the models themselves).
import { ConfigError } from '../../config/settings.js';
import { type InstalledModel, ModelManifestError } from '../../engines/model-dir/manifest.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import { type CatalogAlias, type CatalogModel, parseAliasPair } from './catalog.js';

export class ModelClaimError extends Error {}

/** The models in `modelsDir`; a broken manifest or a missing file is a configuration error (exit 2, one line). */
export function installedModels(settings: { modelsDir: string }): InstalledModel[] {
  try {
    return scanModelsDir(settings.modelsDir);
  } catch (err) {
    if (err instanceof ModelManifestError) throw new ConfigError(`model folder: ${err.message}`);
    throw err;
  }
}

/**
 * The installed offline model that decodes live utterances again (PARLANCE_REALTIME_SECOND_PASS_MODEL, else the one
 * whose manifest says `"second_pass": true`); undefined: the built-in second pass. A name that is not an installed
 * offline model, or two models claiming the role, is a configuration error.
 */
export function secondPassModelOf(
  installed: readonly InstalledModel[],
  settings: { realtimeSecondPass: boolean; realtimeSecondPassModel: string },
): string | undefined {
  if (!settings.realtimeSecondPass) return undefined;
  const offline = installed.filter((m) => m.family === 'stt-offline');
  if (settings.realtimeSecondPassModel) {
    if (offline.some((m) => m.id === settings.realtimeSecondPassModel)) return settings.realtimeSecondPassModel;
    throw new ConfigError(
      `PARLANCE_REALTIME_SECOND_PASS_MODEL (realtimeSecondPassModel): ${settings.realtimeSecondPassModel} is not an installed offline STT model (installed: ${offline.map((m) => m.id).join(', ') || 'none'})`,
    );
  }
  const claims = offline.filter((m) => m.second_pass);
  if (claims.length > 1)
    throw new ConfigError(
      `models ${claims.map((m) => `${m.id} (${m.dir})`).join(' and ')} both claim the second pass ("second_pass": true): keep it in one manifest, or name one with PARLANCE_REALTIME_SECOND_PASS_MODEL`,
    );
  return claims[0]?.id;
}

/** The alias table with the claims of `installed` in (a claim that cannot hold is a configuration error). */
export function aliasesOf(
  installed: readonly InstalledModel[],
  entries: readonly CatalogModel[],
  settings: { sttModelAliases: readonly string[] },
): CatalogAlias[] {
  try {
    return claimedAliases(installed, entries, settings.sttModelAliases);
  } catch (err) {
    if (err instanceof ModelClaimError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * The operator's alias pairs with the claims of the installed models in; throws ModelClaimError on a claim that cannot
 * hold. `entries` are the catalog's: an offline model is offered for async transcription, a streaming one for real
 * time and for async (its files decoded segment by segment), under the same id. A claimed alias keeps the mode it had
 * (`stt-async-v4` stays async, `stt-rt-v4` real time); a new one is offered in every mode of its model.
 */
export function claimedAliases(installed: readonly InstalledModel[], entries: readonly CatalogModel[], aliasPairs: readonly string[]): CatalogAlias[] {
  const aliases = new Map<string, CatalogAlias>();
  for (const pair of aliasPairs) {
    const a = parseAliasPair(pair);
    aliases.set(a.alias, a);
  }
  for (const m of installed) {
    if (m.family !== 'stt-offline' && m.family !== 'stt-streaming') continue;
    if (entries.some((c) => c.id === m.id && c.engineModelId !== m.id))
      throw new ModelClaimError(`model ${m.id} (${m.dir}) has the id of a built-in model: give it another id`);
    const modes = entries.filter((c) => c.id === m.id).map((c) => c.mode);
    for (const alias of m.aliases ?? []) {
      const previous = aliases.get(alias);
      const previousModes = entries.filter((c) => c.id === previous?.target).map((c) => c.mode);
      const previousMode = previousModes.length === 1 ? previousModes[0] : undefined;
      if (previousMode && !modes.includes(previousMode))
        throw new ModelClaimError(`model ${m.id} (${m.dir}) transcribes files only and cannot take over the real-time model id ${alias}`);
      if (entries.some((c) => c.id === alias)) throw new ModelClaimError(`model ${m.id} (${m.dir}) claims ${alias}, the id of a model: claim aliases only`);
      aliases.set(alias, { alias, target: m.id, ...(previousMode && modes.length > 1 ? { mode: previousMode } : {}) });
    }
  }
  return [...aliases.values()];
}
