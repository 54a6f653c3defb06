// `parlance models ...`: the speech models and translation pairs this server offers; bringing and removing models.
import type { Command } from 'commander';
import { MODEL_TYPES, type ModelFamily } from '../engines/model-dir/manifest.js';
import { PullError, pullModel, removeModel } from '../engines/model-dir/pull.js';
import { createSttRegistry } from '../engines/stt/index.js';
import { TtsRegistry } from '../engines/tts/registry.js';
import { createTranslationRegistry, translationOptionsFrom } from '../engines/translate/registry.js';
import { ModelCatalog } from '../modules/models/catalog.js';
import { catalogOf, installedModels } from '../modules/models/installed.js';
import { ttsModelRecords } from '../modules/tts/model-records.js';
import { type CommonOpts, print, settingsFrom, withCommon } from './common.js';

export function modelsCommands(program: Command): void {
  const modelsCmd = program.command('models').description('speech models this server offers');

  withCommon(
    modelsCmd.command('list').description('list speech-to-text models and aliases (as GET /v1/models), then text-to-speech models and aliases (as GET /v1/tts-models)'),
  ).action(async (opts: CommonOpts) => {
    const settings = settingsFrom(opts);
    const translation = await createTranslationRegistry({ ...translationOptionsFrom(settings), apertium: { ...translationOptionsFrom(settings).apertium, idleMs: 0 } });
    const installed = installedModels(settings);
    const offered = catalogOf(installed, settings);
    const catalog = new ModelCatalog(createSttRegistry({ installed }), offered.catalog, offered.aliases, translation);
    const models = catalog.list() as { id: string; aliased_model_id: string | null; transcription_mode: string; name: string }[];
    // A brought voice that cannot be loaded is left out here as by the server, its reason on stderr.
    const ttsRegistry = await TtsRegistry.create(settings.ttsModelAliases, settings.ttsModels, { installed });
    const ttsModels = ttsModelRecords(ttsRegistry);
    const line = (id: string, mode: string, aliased: string | null, name: string) => `${id.padEnd(28)} ${mode.padEnd(10)} ${aliased ? `→ ${aliased}` : name}`;
    print(
      opts,
      { models, tts_models: ttsModels },
      [
        ...models.map((m) => line(m.id, m.transcription_mode, m.aliased_model_id, m.name)),
        ...ttsModels.map((m) => line(m.id, 'tts', m.aliased_model_id, `${m.name}, ${m.voices.length} voices`)),
      ].join('\n'),
    );
    await Promise.all([translation.close(), ttsRegistry.close()]);
  });

  withCommon(
    modelsCmd
      .command('pull')
      .description('download a model archive (sherpa-onnx .tar.bz2, by URL or path) into the models directory, with its parlance-model.json; restart the server to offer it')
      .argument('<source>', 'URL or local path of the archive')
      .requiredOption('--family <family>', 'stt-offline, stt-streaming, tts or speaker-embedding')
      .requiredOption('--type <type>', 'model type within the family, e.g. whisper, nemo-transducer, transducer, vits')
      .option('--id <id>', 'public model id ending in a version (default: the archive name with -v1)')
      .option('--name <name>', 'display name')
      .option('--language <code...>', 'languages (ISO 639-1; default en)')
      .option('--alias <id...>', 'public ids to take over, e.g. stt-async-v4')
      .option('--sha256 <hex>', 'expected SHA-256 of the archive'),
  ).action(async (source: string, opts: CommonOpts & { family: string; type: string; id?: string; name?: string; language?: string[]; alias?: string[]; sha256?: string }) => {
    const settings = settingsFrom(opts);
    if (!(opts.family in MODEL_TYPES)) throw new PullError(`--family must be one of: ${Object.keys(MODEL_TYPES).join(', ')}`);
    const m = await pullModel({ source, modelsDir: settings.modelsDir, family: opts.family as ModelFamily, type: opts.type, id: opts.id, name: opts.name, languages: opts.language, aliases: opts.alias, sha256: opts.sha256 });
    print(opts, { model: { id: m.id, dir: m.dir, family: m.family, type: m.type, files: m.files, aliases: m.aliases ?? [] } }, `${m.id}: ${m.family} ${m.type} model in ${m.dir} (restart the server to offer it)`);
  });

  withCommon(modelsCmd.command('remove').description('remove a model you brought (its folder in the models directory); restart the server').argument('<id>', 'the model id')).action(
    async (id: string, opts: CommonOpts) => {
      const dir = removeModel(settingsFrom(opts).modelsDir, id);
      if (!dir) throw new PullError(`no model ${id} in the models directory`);
      print(opts, { removed: { id, dir } }, `removed ${id} (${dir})`);
    },
  );

  withCommon(modelsCmd.command('translations').description('list the installed translation directions (apertium pairs found at start-up)')).action(
    async (opts: CommonOpts) => {
      const settings = settingsFrom(opts);
      const translation = await createTranslationRegistry({ ...translationOptionsFrom(settings), apertium: { ...translationOptionsFrom(settings).apertium, idleMs: 0 } });
      const pairs = translation.pairs();
      print(opts, { pairs }, pairs.length ? pairs.map((p) => `${p.source} -> ${p.target}`).join('\n') : 'no translation pairs installed');
      await translation.close();
    },
  );
}
