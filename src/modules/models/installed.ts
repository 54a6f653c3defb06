// Models users brought (the models directory, engines/model-dir) in the public catalog: each STT model under its
// manifest id, and the public ids it claims (`stt-async-v4`, ...) taken over from the built-in models.
import { ConfigError } from '../../config/settings.js';
import { type InstalledModel, ModelManifestError } from '../../engines/model-dir/manifest.js';
import { scanModelsDir } from '../../engines/model-dir/scan.js';
import { type CatalogModel, defaultCatalog } from './catalog.js';

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

/** The public catalog and alias table with `installed` in (a claim that cannot hold is a configuration error). */
export function catalogOf(
  installed: readonly InstalledModel[],
  settings: { sttModelAliases: readonly string[] },
): { catalog: CatalogModel[]; aliases: string[] } {
  try {
    return withInstalledModels(installed, defaultCatalog, settings.sttModelAliases);
  } catch (err) {
    if (err instanceof ModelClaimError) throw new ConfigError(err.message);
    throw err;
  }
}

/** The catalog entries and alias table with the installed models in; throws ModelClaimError on a claim that cannot hold. */
export function withInstalledModels(
  installed: readonly InstalledModel[],
  catalog: readonly CatalogModel[],
  aliasPairs: readonly string[],
): { catalog: CatalogModel[]; aliases: string[] } {
  const models = [...catalog];
  const aliases = new Map(aliasPairs.map((p) => [p.split('=')[0]!.trim(), p] as const));
  for (const m of installed) {
    if (m.family !== 'stt-offline' && m.family !== 'stt-streaming') continue;
    if (models.some((c) => c.id === m.id)) throw new ModelClaimError(`model ${m.id} (${m.dir}) has the id of a built-in model: give it another id`);
    const entry: CatalogModel = { id: m.id, name: m.name ?? m.id, mode: m.family === 'stt-streaming' ? 'real_time' : 'async', engineModelId: m.id };
    models.push(entry);
    for (const alias of m.aliases ?? []) {
      const previous = aliases.get(alias);
      const previousTarget = previous?.split('=')[1]?.trim();
      const previousMode = models.find((c) => c.id === previousTarget)?.mode;
      if (previousMode && previousMode !== entry.mode) {
        const what =
          entry.mode === 'async' ? 'transcribes files only and cannot take over the real-time' : 'is a real-time model and cannot take over the async';
        throw new ModelClaimError(`model ${m.id} (${m.dir}) ${what} model id ${alias}`);
      }
      if (models.some((c) => c.id === alias)) throw new ModelClaimError(`model ${m.id} (${m.dir}) claims ${alias}, the id of a model: claim aliases only`);
      aliases.set(alias, `${alias}=${m.id}`);
    }
  }
  return { catalog: models, aliases: [...aliases.values()] };
}
