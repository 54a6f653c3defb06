// /v1/admin/models: the model record, the catalogue entry, and each route's schema (they make /openapi.json too).
import { Type } from '@sinclair/typebox';
import { ALIAS_RE } from '../../engines/model-dir/manifest.js';
import { ErrorBody } from '../../wire/schemas.js';
import { MODEL_STATUSES } from './records.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const ModelRecord = Type.Object(
  {
    id: Type.String({ description: 'Public model id (ends in a version)' }),
    status: Type.Union(
      MODEL_STATUSES.map((s) => Type.Literal(s)),
      { description: 'downloading → installing → ready, or failed (error_type, error_message)' },
    ),
    source: Nullable(Type.String({ description: 'What the pull was given; null for a model installed on the machine' })),
    family: Type.String({ description: 'stt-offline, stt-streaming, tts, speaker-embedding or language-id' }),
    type: Type.String({ description: 'Model type within the family (whisper, transducer, vits, ...)' }),
    name: Nullable(Type.String()),
    languages: Type.Array(Type.String()),
    aliases: Type.Array(Type.String(), { description: 'Public ids the model answers to besides its own' }),
    size_bytes: Nullable(Type.Integer({ description: 'Bytes of its folder once installed' })),
    sha256: Nullable(Type.String({ description: 'SHA-256 of the archive pulled' })),
    progress: Nullable(
      Type.Object(
        { bytes_received: Type.Integer(), bytes_total: Nullable(Type.Integer()) },
        { description: 'While downloading: bytes so far and in all (when known)' },
      ),
    ),
    error_type: Nullable(Type.String()),
    error_message: Nullable(Type.String()),
    loaded: Type.Boolean({ description: "Its weights are in this node's memory now" }),
    created_at: Nullable(Type.String({ format: 'date-time' })),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'ModelRecord' },
);

const CatalogueEntry = Type.Object({
  name: Type.String({ description: 'What POST /v1/admin/models takes as source' }),
  title: Type.String(),
  family: Type.String(),
  type: Type.String(),
  languages: Type.Array(Type.String()),
  size_mb: Nullable(Type.Number({ description: 'Approximate download size (MB)' })),
  id: Type.String({ description: 'Id of the installed model' }),
  aliases: Type.Array(Type.String(), { description: 'Public ids it takes over when free' }),
  installed: Type.Boolean(),
});

const Alias = Type.String({ pattern: ALIAS_RE.source, maxLength: 128 });
const Params = Type.Object({ model_id: Type.String({ minLength: 1, maxLength: 128 }) });
const errors = { '4xx': ErrorBody, 500: ErrorBody };

export const listAdminModelsSchema = {
  tags: ['admin'],
  summary: 'List installed models and pulls with their state, and the catalogue of models to pull (needs models:admin)',
  response: { 200: Type.Object({ models: Type.Array(ModelRecord), catalogue: Type.Array(CatalogueEntry) }), ...errors },
};

export const pullModelSchema = {
  tags: ['admin'],
  summary: 'Pull a model (a catalogue name, an archive URL, or a path in the import folder); 202 with its record, which moves to ready or failed',
  body: Type.Object(
    {
      source: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Catalogue name, http(s) URL of an archive or .onnx file, or a path inside PARLANCE_MODELS_IMPORT_DIR',
      }),
      sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: "Expected SHA-256 of the archive (default: the catalogue entry's)" })),
      family: Type.Optional(Type.String({ description: "Needed for a source not in the catalogue (default: the entry's)" })),
      type: Type.Optional(Type.String({ maxLength: 64, description: "Needed for a source not in the catalogue (default: the entry's)" })),
      id: Type.Optional(Type.String({ maxLength: 128, description: "Public id (default: the entry's, or the source's name with -v1)" })),
      aliases: Type.Optional(Type.Array(Alias, { maxItems: 32, description: "Public ids to take over (default: the entry's suggestions that are free)" })),
    },
    { additionalProperties: false },
  ),
  response: { 202: ModelRecord, ...errors },
};

export const getAdminModelSchema = {
  tags: ['admin'],
  summary: 'One installed model or pull',
  params: Params,
  response: { 200: ModelRecord, ...errors },
};

export const deleteAdminModelSchema = {
  tags: ['admin'],
  summary:
    'Remove a model (or a failed pull; a pull under way is cancelled): it leaves the model lists at once; sessions using it finish on it, then it is unloaded',
  params: Params,
  response: { 204: Type.Null(), ...errors },
};

export const setAliasesSchema = {
  tags: ['admin'],
  summary: "Set an installed model's aliases (the public ids it answers to besides its own), in one step",
  params: Params,
  body: Type.Object({ aliases: Type.Array(Alias, { maxItems: 32 }) }, { additionalProperties: false }),
  response: { 200: ModelRecord, ...errors },
};
