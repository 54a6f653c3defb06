// `parlance models ...`: the speech models and translation pairs this server offers; bringing (pull, import, from the
// catalogue) and removing models.
import type { Command } from 'commander';
import { translationOptionsFrom } from '../config/translation-options.js';
import { EngineCatalog, ENGINES } from '../engines/catalog.js';
import { loadCatalogue } from '../engines/model-dir/catalogue.js';
import type { InstalledModel } from '../engines/model-dir/manifest.js';
import { progressMode, StderrProgress } from '../engines/model-dir/progress.js';
import { importFolder, PullError, pullModel, removeModel } from '../engines/model-dir/pull.js';
import { scanModelsDir } from '../engines/model-dir/scan.js';
import { resolveSource, type SourceFlags } from '../engines/model-dir/sources.js';
import type { TranslationRegistryOptions } from '../engines/translate/registry.js';
import { ModelCatalog } from '../modules/models/catalog.js';
import { aliasesOf, installedModels } from '../modules/models/installed.js';
import { loadCheck } from '../modules/models/load-check.js';
import { tellServers, type Told } from '../modules/models/tell-servers.js';
import { ttsModelRecords } from '../modules/tts/model-records.js';
import { type CommonOpts, print, settingsFrom, withCommon } from './common.js';

export function modelsCommands(program: Command): void {
  const modelsCmd = program.command('models').description('speech models this server offers');

  withCommon(
    modelsCmd
      .command('list')
      .description(
        'list speech-to-text models and aliases (as GET /v1/models; a speech-to-text model you brought is loaded once in a separate process, and shown failed with the reason if it cannot be), text-to-speech models and aliases (as GET /v1/tts-models), then installed models that label speech (language identification, speaker embeddings)',
      ),
  ).action(async (opts: CommonOpts) => {
    const settings = settingsFrom(opts);
    const installed = installedModels(settings);
    const engines = await EngineCatalog.create({
      installed,
      tts: { aliases: settings.ttsModelAliases, enabled: settings.ttsModels },
      translation: spareless(translationOptionsFrom(settings)),
    });
    const catalog = new ModelCatalog(engines, aliasesOf(installed, engines.stt.offers(), settings));
    const loadErrors = await sttLoadErrors(installed);
    // Models you brought (and their aliases) say whether they load: the server refuses those that fail.
    const models = (catalog.list() as SttModelRow[]).map((m): SttModelRow => {
      const target = m.aliased_model_id ?? m.id;
      if (!loadErrors.has(target)) return m;
      const error = loadErrors.get(target);
      return { ...m, status: error === undefined ? 'ok' : 'failed', load_error: error ?? null };
    });
    // A brought voice that cannot be loaded is left out here as by the server, its reason on stderr.
    const ttsModels = ttsModelRecords(engines.tts);
    // Models behind no public id of their own: they label the transcripts of the models above.
    const labelling = installed
      .filter((m) => m.family === 'language-id' || m.family === 'speaker-embedding')
      .map((m) => ({ id: m.id, name: m.name ?? m.id, family: m.family, type: m.type, languages: m.languages }));
    const line = (id: string, mode: string, aliased: string | null, name: string) => `${id.padEnd(28)} ${mode.padEnd(10)} ${aliased ? `→ ${aliased}` : name}`;
    print(
      opts,
      { models, tts_models: ttsModels, labelling_models: labelling },
      [
        ...models.map((m) => line(m.id, m.transcription_mode, m.aliased_model_id, m.name) + (m.load_error ? `  FAILED to load: ${m.load_error}` : '')),
        ...ttsModels.map((m) => line(m.id, 'tts', m.aliased_model_id, `${m.name}, ${m.voices.length} voices`)),
        ...labelling.map((m) => line(m.id, m.family, null, `${m.name} (${m.type}; ${m.languages.join(', ')})`)),
      ].join('\n'),
    );
    await engines.close();
  });

  const sourceOptions = (cmd: Command) =>
    withCommon(cmd)
      .option('--family <family>', "stt-offline, stt-streaming, tts, speaker-embedding or language-id (default: the catalogue entry's)")
      .option('--type <type>', "model type within the family, e.g. whisper, nemo-transducer, transducer, vits (default: the catalogue entry's)")
      .option('--id <id>', "public model id ending in a version (default: the catalogue entry's, or the source's name with -v1)")
      .option('--name <name>', 'display name')
      .option('--language <code...>', "languages (ISO 639-1; default: the catalogue entry's, or en)")
      .option('--alias <id...>', "public ids to take over, e.g. stt-async-v4 (instead of the catalogue entry's suggestions)")
      .option('--no-aliases', "take over no public ids, not even the catalogue entry's suggestions")
      .option('--sha256 <hex>', "expected SHA-256 of the archive (default: the catalogue entry's, when known)")
      .option('--file <role=name...>', 'the file of a role instead of the one found by name, e.g. encoder=encoder.onnx');

  sourceOptions(
    modelsCmd
      .command('pull')
      .description(
        'download a model (a catalogue name, or the URL or path of a sherpa-onnx .tar.bz2 archive or .onnx file) into the models directory, with its parlance-model.json; an interrupted download resumes; servers running on this data directory offer it within seconds',
      )
      .argument('<source>', 'catalogue name (`parlance models catalogue`), URL, or local path'),
  ).action(async (source: string, opts: CommonOpts & SourceFlags) => bring(source, opts, 'pull'));

  sourceOptions(
    modelsCmd
      .command('import')
      .description(
        'install a model from a local archive or .onnx file (as pull) or a local folder (copied; its parlance-model.json is used if it has one), for machines without internet',
      )
      .argument('<path>', 'archive, .onnx file or folder'),
  ).action(async (source: string, opts: CommonOpts & SourceFlags) => bring(source, opts, 'import'));

  withCommon(
    modelsCmd.command('catalogue').alias('catalog').description('list the models `parlance models pull NAME` knows (sherpa-onnx release archives)'),
  ).action(async (opts: CommonOpts) => {
    const catalogue = loadCatalogue(process.env.PARLANCE_MODELS_CATALOGUE);
    let installed = new Set<string>();
    try {
      installed = new Set(scanModelsDir(settingsFrom(opts).modelsDir).map((m) => m.id));
    } catch {
      // A broken model folder does not hide the catalogue.
    }
    const rows = catalogue.map((e) => ({ ...e, aliases: e.aliases ?? [], sha256: e.sha256 ?? null, installed: installed.has(e.id) }));
    const line = (e: (typeof rows)[number]) =>
      [
        e.name.padEnd(24),
        `${e.family} ${e.type}`.padEnd(28),
        e.languages.join(',').padEnd(16),
        (e.size_mb === undefined ? '' : `${Math.round(e.size_mb)} MB`).padStart(7),
        `  ${e.aliases.join(' ')}`.padEnd(16),
        e.installed ? 'installed' : '',
      ]
        .join(' ')
        .trimEnd();
    const header = ['NAME'.padEnd(24), 'FAMILY TYPE'.padEnd(28), 'LANGUAGES'.padEnd(16), 'SIZE'.padStart(7), '  SUGGESTED ALIASES'].join(' ');
    print(opts, { catalogue: rows }, [header, ...rows.map(line), '', 'pull one with `parlance models pull NAME`; sizes are approximate downloads'].join('\n'));
  });

  withCommon(
    modelsCmd
      .command('remove')
      .description('remove a model you brought (its folder in the models directory); servers running on this data directory stop offering it within seconds')
      .argument('<id>', 'the model id'),
  ).action(async (id: string, opts: CommonOpts) => {
    const settings = settingsFrom(opts);
    const dir = removeModel(settings.modelsDir, id);
    if (!dir) throw new PullError(`no model ${id} in the models directory`);
    const told = await tellServers(settings, { removed: id });
    warnUntold(told);
    print(opts, { removed: { id, dir }, servers_told: told.told }, `removed ${id} (${dir})`);
  });

  withCommon(modelsCmd.command('translations').description('list the installed translation directions (apertium pairs found at start-up)')).action(
    async (opts: CommonOpts) => {
      const settings = settingsFrom(opts);
      // The translation engines alone: nothing else is started.
      const engines = await EngineCatalog.create(
        { translation: spareless(translationOptionsFrom(settings)) },
        ENGINES.filter((e) => e.family === 'translate'),
      );
      const pairs = engines.translation.pairs();
      print(opts, { pairs }, pairs.length ? pairs.map((p) => `${p.source} -> ${p.target}`).join('\n') : 'no translation pairs installed');
      await engines.close();
    },
  );
}

/** `models pull` and `models import`: resolve the source, bring the model, and say what was done. */
async function bring(source: string, opts: CommonOpts & SourceFlags, command: 'pull' | 'import'): Promise<void> {
  const settings = settingsFrom(opts);
  const { modelsDir } = settings;
  // Environment knobs of this command only (not settings: the server never downloads).
  const resolved = resolveSource(source, opts, loadCatalogue(process.env.PARLANCE_MODELS_CATALOGUE), command);
  const mode = progressMode(opts.json);
  const interval = Number(process.env.PARLANCE_PULL_PROGRESS_SECONDS) || undefined;
  const r =
    resolved.kind === 'folder'
      ? await importFolder({ ...resolved.options, modelsDir, check: loadCheck })
      : await pullModel({
          ...resolved.options,
          modelsDir,
          check: loadCheck,
          progress: (file) => (mode === 'none' ? undefined : new StderrProgress(file, mode, interval)),
        });
  const m = r.model;
  const told = await tellServers(settings);
  warnUntold(told);
  const checked = resolved.kind === 'archive' ? resolved.checkedAgainst : undefined;
  const when = told.told ? 'servers running on this data directory offer it within seconds' : 'the server offers it from its next start';
  const lines = [`${m.id}: ${m.family} ${m.type} model in ${m.dir} (${when})`];
  if (r.sha256) {
    lines.push(
      checked
        ? `sha256 ${r.sha256} (matches ${checked})`
        : `sha256 ${r.sha256} (nothing to check it against: keep it, and give it as --sha256 to check the archive next time)`,
    );
  }
  if (r.skippedAliases.length) lines.push(`left out the suggested aliases ${r.skippedAliases.join(', ')}: another model holds them`);
  print(
    opts,
    {
      model: { id: m.id, dir: m.dir, family: m.family, type: m.type, files: m.files, aliases: m.aliases ?? [] },
      archive: r.sha256 ? { source: resolved.options.source, sha256: r.sha256, checked: r.checked, resumed_from: r.resumedFrom } : null,
      skipped_aliases: r.skippedAliases,
      servers_told: told.told,
    },
    lines.join('\n'),
  );
}

/** A database that is there but could not be written: the change is made, and running servers see it after a restart. */
function warnUntold(told: Told): void {
  if (!told.told && told.reason !== undefined)
    process.stderr.write(`warning: running servers were not told of the change (${told.reason}): they serve it after a restart\n`);
}

/** A GET /v1/models entry as listed; a model you brought (or an alias of one) also says whether it loads. */
type SttModelRow = {
  id: string;
  aliased_model_id: string | null;
  transcription_mode: string;
  name: string;
  status?: 'ok' | 'failed';
  load_error?: string | null;
};

/** Each speech-to-text model brought → why it cannot load (undefined: it loads), checked one after another. */
async function sttLoadErrors(installed: readonly InstalledModel[]): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (const m of installed) {
    if (m.family !== 'stt-offline' && m.family !== 'stt-streaming') continue;
    out.set(
      m.id,
      await loadCheck(m).then(
        () => undefined,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      ),
    );
  }
  return out;
}

/** A command's translation options: no spare processes are kept (the command ends at once). */
function spareless(options: TranslationRegistryOptions): TranslationRegistryOptions {
  return { ...options, apertium: { ...options.apertium, idleMs: 0 } };
}
