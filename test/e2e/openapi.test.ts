// GET /openapi.json: the machine-readable description of the main interface, version 1.0.0 (spec: Versioning).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, type Parlance } from '../harness.js';

interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses?: Record<string, unknown>; parameters?: { name: string; in: string }[]; requestBody?: unknown }>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
  security?: Record<string, unknown>[];
}

let s: Parlance;
let doc: OpenApiDoc;
let status: number;
let contentType: string | null;

beforeAll(async () => {
  s = await startParlance();
  const res = await s.request('/openapi.json', { key: null });
  status = res.status;
  contentType = res.headers.get('content-type');
  doc = (await res.json()) as OpenApiDoc;
});
afterAll(async () => s?.stop());

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const methodsOf = (p: string) =>
  Object.keys(doc.paths[p] ?? {})
    .filter((m) => HTTP_METHODS.includes(m))
    .sort();

describe('GET /openapi.json', () => {
  it('is served without a key, as JSON', () => {
    expect(status).toBe(200);
    expect(contentType).toMatch(/^application\/json/);
  });

  it('is OpenAPI 3.x, interface version 1.0.0', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.info.title.length).toBeGreaterThan(0);
  });

  it('lists the files endpoints with their methods', () => {
    expect(methodsOf('/v1/files')).toEqual(expect.arrayContaining(['get', 'post']));
    expect(methodsOf('/v1/files')).not.toContain('put');
    expect(methodsOf('/v1/files/count')).toContain('get');
    expect(methodsOf('/v1/files/{file_id}')).toEqual(expect.arrayContaining(['get', 'delete']));
    expect(methodsOf('/v1/files/{file_id}')).not.toContain('post');
    expect(methodsOf('/v1/files/{file_id}/content')).toEqual(['get']);
    expect(methodsOf('/v1/admin/models').sort()).toEqual(['get', 'post']);
    expect(methodsOf('/v1/admin/models/{model_id}').sort()).toEqual(['delete', 'get']);
    expect(methodsOf('/v1/admin/models/{model_id}/aliases')).toEqual(['put']);
  });

  it('lists POST /v1/auth/temporary-api-key with its JSON body and 201 response', () => {
    expect(methodsOf('/v1/auth/temporary-api-key')).toContain('post');
    const op = doc.paths['/v1/auth/temporary-api-key']!.post!;
    expect(op.requestBody).toBeDefined();
    expect(JSON.stringify(op.requestBody)).toContain('usage_type');
    expect(Object.keys(op.responses ?? {})).toContain('201');
  });

  it('uses OpenAPI path templates, never Fastify :params', () => {
    for (const p of Object.keys(doc.paths)) expect(p, p).not.toMatch(/:/);
    const params = doc.paths['/v1/files/{file_id}']!.get!.parameters ?? [];
    expect(params).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'file_id', in: 'path' })]));
  });

  it('documents the list query parameters limit and cursor', () => {
    const names = (doc.paths['/v1/files']!.get!.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['limit', 'cursor']));
  });

  it('every documented path is under /v1, but POST /tts and /tts/with-timestamps (the TTS interface, served on the same origin)', () => {
    for (const p of Object.keys(doc.paths)) expect(p.startsWith('/v1/') || p === '/tts' || p === '/tts/with-timestamps', p).toBe(true);
  });

  it('documents the JSON body of POST /tts', () => {
    expect(methodsOf('/tts')).toEqual(['post']);
    const body = doc.paths['/tts']!.post!.requestBody as { content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }> };
    const schema = body.content['application/json']!.schema;
    expect(schema.required).toEqual(expect.arrayContaining(['model', 'language', 'voice', 'audio_format', 'text']));
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['sample_rate', 'bitrate', 'speed', 'reduce_silence', 'client_reference_id']));
    expect(JSON.stringify(schema.properties.audio_format)).toContain('mp3');
  });

  it.each([
    { path: '/v1/files', required: ['file'], optional: ['client_reference_id', 'filename'] },
    { path: '/v1/voices', required: ['name', 'file'], optional: ['filename'] },
  ])('documents the multipart upload body of POST $path', ({ path, required, optional }) => {
    const body = doc.paths[path]!.post!.requestBody as {
      content: Record<string, { schema: { required: string[]; properties: Record<string, { type: string; format?: string }> } }>;
    };
    expect(Object.keys(body.content)).toEqual(['multipart/form-data']);
    const schema = body.content['multipart/form-data']!.schema;
    expect(schema.required.sort()).toEqual([...required].sort());
    expect(Object.keys(schema.properties).sort()).toEqual([...required, ...optional].sort());
    expect(schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('hides the operational routes (/health, /openapi.json, /docs/errors)', () => {
    for (const hidden of ['/health', '/openapi.json', '/docs/errors']) expect(doc.paths).not.toHaveProperty(hidden);
  });

  it('declares bearer authentication', () => {
    expect(doc.components?.securitySchemes).toBeDefined();
    const schemes = Object.values(doc.components!.securitySchemes!);
    expect(schemes).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'http', scheme: 'bearer' })]));
    expect(doc.security?.length).toBeGreaterThan(0);
  });

  it('every documented operation actually exists on the server (no 404 for a documented path)', async () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      const concrete = p.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      for (const m of Object.keys(ops).filter((k) => HTTP_METHODS.includes(k))) {
        const res = await s.request(concrete, { method: m.toUpperCase(), key: null });
        // Unauthenticated: a real route answers 401, an unknown one 404 (or 405 for a wrong method).
        expect([res.status, `${m.toUpperCase()} ${p}`]).toEqual([401, `${m.toUpperCase()} ${p}`]);
      }
    }
  });
});
