// Enrolled speakers over HTTP: parse, delegate to SpeakersService, shape the reply. No rules live here.
import type { RoutePlugin } from '../../http/app-types.js';
import { readSingleFileUpload } from '../../http/single-file-upload.js';
import { invalidField } from '../../wire/api-error.js';
import { uploadValidator } from '../files/schemas.js';
import {
  addSampleSchema,
  createSpeakerSchema,
  deleteSampleSchema,
  deleteSpeakerSchema,
  getSampleSchema,
  getSpeakerSchema,
  listSamplesSchema,
  listSpeakersSchema,
} from './schemas.js';
import type { SpeakersService } from './service.js';

const read = { permission: { scope: 'speakers', level: 'read' }, rate: 'speakers' } as const;
const write = { permission: { scope: 'speakers', level: 'write' }, rate: 'speakers' } as const;

export interface SpeakersRoutesOptions {
  speakers: SpeakersService;
}

export const speakersRoutes: RoutePlugin<SpeakersRoutesOptions> = async (app, { speakers }) => {
  app.post('/v1/speakers', { schema: createSpeakerSchema, config: { guard: write } }, async (req, reply) =>
    reply.code(201).send(await speakers.create(req.auth, req.body)),
  );

  app.get('/v1/speakers', { schema: listSpeakersSchema, config: { guard: read } }, async (req) => {
    const page = await speakers.list(req.auth, req.query.limit, req.query.cursor);
    return { speakers: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/speakers/:speaker_id', { schema: getSpeakerSchema, config: { guard: read } }, async (req) => speakers.get(req.auth, req.params.speaker_id));

  app.delete('/v1/speakers/:speaker_id', { schema: deleteSpeakerSchema, config: { guard: write } }, async (req, reply) => {
    await speakers.delete(req.auth, req.params.speaker_id);
    return reply.code(204).send(null);
  });

  // One route, two bodies: a multipart upload, or JSON naming an uploaded file.
  app.post('/v1/speakers/:speaker_id/audio', { schema: addSampleSchema, validatorCompiler: uploadValidator, config: { guard: write } }, async (req, reply) => {
    const speakerId = req.params.speaker_id;
    if (!req.isMultipart()) {
      const body = req.body as Record<string, unknown> | null | undefined;
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw invalidField('file_id', 'send multipart/form-data with a "file" part, or a JSON object {"file_id": "..."}', 'missing');
      return reply.code(201).send(await speakers.addFromFile(req.auth, req.id, speakerId, body.file_id));
    }
    const { staged, fields } = await readSingleFileUpload(req, {
      notMultipart: 'Enrolment audio must be multipart/form-data with a "file" part, or JSON {"file_id"}.',
      fields: ['filename'],
      precheck: (declared) => speakers.clips.precheck(declared),
      receive: (file, filename) => speakers.clips.receive(file, filename),
      discard: (s) => speakers.clips.discard(s),
    });
    return reply.code(201).send(await speakers.addUploaded(req.auth, req.id, speakerId, staged, fields));
  });

  app.get('/v1/speakers/:speaker_id/audio', { schema: listSamplesSchema, config: { guard: read } }, async (req) => {
    const page = await speakers.listSamples(req.auth, req.params.speaker_id, req.query.limit, req.query.cursor);
    return { samples: page.items, next_page_cursor: page.next_page_cursor };
  });

  app.get('/v1/speakers/:speaker_id/audio/:sample_id', { schema: getSampleSchema, config: { guard: read } }, async (req) =>
    speakers.getSample(req.auth, req.params.speaker_id, req.params.sample_id),
  );

  app.delete('/v1/speakers/:speaker_id/audio/:sample_id', { schema: deleteSampleSchema, config: { guard: write } }, async (req, reply) => {
    await speakers.deleteSample(req.auth, req.params.speaker_id, req.params.sample_id);
    return reply.code(204).send(null);
  });
};
