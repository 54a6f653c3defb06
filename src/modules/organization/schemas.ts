import { type Static, Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';

const errors = { '4xx': ErrorBody, 500: ErrorBody };

export const Organization = Type.Object(
  { id: Type.String({ format: 'uuid' }), name: Type.String(), created_at: Type.String({ format: 'date-time' }) },
  { $id: 'Organization' },
);
export type Organization = Static<typeof Organization>;

export const Project = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    region: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Project' },
);
export type Project = Static<typeof Project>;

export const ProjectApiKey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    key_prefix: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.String(),
    created_by_key_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  },
  { $id: 'ProjectApiKey' },
);
/** The spec's Project API key record: never the secret nor its hash. */
export type ProjectApiKey = Static<typeof ProjectApiKey>;

// Ids are checked by lookup: a malformed id is an unknown one (404), as for files and transcriptions.
const ProjectParams = Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 64 }) });
const KeyParams = Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 64 }), key_id: Type.String({ minLength: 1, maxLength: 64 }) });

export const getOrganizationSchema = {
  tags: ['organization'],
  summary: "The API key's organization",
  response: { 200: Organization, ...errors },
};

export const listProjectsSchema = {
  tags: ['organization'],
  summary: 'Projects of the organization, oldest first; deleted projects excluded',
  response: { 200: Type.Object({ projects: Type.Array(Project) }), ...errors },
};

export const listApiKeysSchema = {
  tags: ['organization'],
  summary: 'API keys of a project, newest first (never the key itself)',
  params: ProjectParams,
  response: { 200: Type.Object({ api_keys: Type.Array(ProjectApiKey) }), ...errors },
};

export const deleteApiKeySchema = {
  tags: ['organization'],
  summary: 'Delete an API key; requests made with it are refused from then on',
  params: KeyParams,
  response: { 204: Type.Null(), ...errors },
};
