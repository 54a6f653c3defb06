// Organization administration endpoints, black-box: a real server and the admin CLI against its data dir.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody, startParlance, type Parlance } from '../harness.js';

let s: Parlance;

beforeAll(async () => {
  s = await startParlance();
});
afterAll(() => s?.stop());

interface Issued {
  id: string;
  api_key: string;
  key_prefix: string;
}

const createKey = (project: string, ...args: string[]) => s.admin<Issued>('create-key', '--project', project, ...args);
const createProject = (name: string, ...args: string[]) => s.admin<{ id: string; name: string; created_at: string }>('create-project', '--name', name, ...args);

async function expectError(res: Response, status: number, type: string): Promise<void> {
  expect(res.status).toBe(status);
  const body = await errorBody(res);
  expect(body.error_type).toBe(type);
}

describe('GET /v1/organization', () => {
  it("returns the key's organization: id, name, created_at and nothing else", async () => {
    const res = await s.request('/v1/organization');
    expect(res.status).toBe(200);
    const org = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(org).sort()).toEqual(['created_at', 'id', 'name']);
    expect(org.id).toBe(s.organizationId);
    expect(org.name).toBe('Default organization');
    expect(new Date(org.created_at as string).toISOString()).toBe(org.created_at);
  });

  it('a key of another organization sees that organization', async () => {
    const other = await s.admin<{ id: string; name: string }>('create-organization', '--name', 'Other org');
    const p = await createProject('other-org-project', '--organization', other.id);
    const k = await createKey(p.id);
    const res = await s.request('/v1/organization', { key: k.api_key });
    expect(await res.json()).toMatchObject({ id: other.id, name: 'Other org' });
  });

  it('401 without a key, 403 without the organization permission', async () => {
    await expectError(await s.request('/v1/organization', { key: null }), 401, 'unauthenticated');
    const k = await createKey(s.projectId, '--permission', 'files:write');
    const res = await s.request('/v1/organization', { key: k.api_key });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).message).toMatch(/organization:read/);
  });
});

describe('GET /v1/organization/projects', () => {
  it("lists the organization's projects oldest first with the Project fields, deleted projects excluded", async () => {
    const a = await createProject('list-a', '--description', 'first', '--region', 'eu');
    const b = await createProject('list-b');
    const c = await createProject('list-c');
    await s.admin('delete-project', b.id);
    const res = await s.request('/v1/organization/projects');
    expect(res.status).toBe(200);
    const { projects } = (await res.json()) as { projects: Record<string, unknown>[] };
    for (const p of projects) expect(Object.keys(p).sort()).toEqual(['created_at', 'description', 'id', 'name', 'region']);
    const ids = projects.map((p) => p.id);
    expect(ids[0]).toBe(s.projectId);
    expect(ids).toContain(a.id);
    expect(ids).toContain(c.id);
    expect(ids).not.toContain(b.id);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(c.id));
    const created = projects.map((p) => p.created_at as string);
    expect([...created].sort()).toEqual(created);
    expect(projects.find((p) => p.id === a.id)).toEqual({ id: a.id, name: 'list-a', description: 'first', region: 'eu', created_at: a.created_at });
  });

  it('never lists projects of another organization', async () => {
    const other = await s.admin<{ id: string }>('create-organization', '--name', 'Hidden org');
    const hidden = await createProject('hidden', '--organization', other.id);
    const { projects } = (await (await s.request('/v1/organization/projects')).json()) as { projects: { id: string }[] };
    expect(projects.map((p) => p.id)).not.toContain(hidden.id);
  });
});

describe('GET /v1/organization/projects/{project_id}/api-keys', () => {
  it("lists a project's keys newest first with the record fields, never the secret; deleted keys excluded", async () => {
    const p = await createProject('keys');
    const k1 = await createKey(p.id, '--name', 'one');
    const k2 = await createKey(p.id, '--name', 'two', '--read-only');
    const k3 = await createKey(p.id, '--name', 'three', '--permission', 'stt_rt:write', 'tts_rt:write');
    await s.admin('revoke-key', k2.id);
    const res = await s.request(`/v1/organization/projects/${p.id}/api-keys`);
    expect(res.status).toBe(200);
    const text = await res.text();
    for (const k of [k1, k3]) expect(text).not.toContain(k.api_key);
    expect(text).not.toMatch(/key_hash/);
    const { api_keys } = JSON.parse(text) as { api_keys: Record<string, unknown>[] };
    expect(api_keys.map((k) => k.id)).toEqual([k3.id, k1.id]);
    for (const k of api_keys)
      expect(Object.keys(k).sort()).toEqual(['created_at', 'created_by', 'created_by_key_id', 'id', 'key_prefix', 'name', 'permissions']);
    expect(api_keys[0]).toMatchObject({
      id: k3.id,
      key_prefix: k3.key_prefix,
      name: 'three',
      permissions: ['stt_rt:write', 'tts_rt:write'],
      created_by: 'admin',
      created_by_key_id: null,
    });
    expect(k3.api_key.startsWith(k3.key_prefix)).toBe(true);
  });

  it("404 project_not_found for an unknown, malformed, deleted or other organization's project", async () => {
    const other = await s.admin<{ id: string }>('create-organization', '--name', 'Foreign org');
    const foreign = await createProject('foreign', '--organization', other.id);
    const gone = await createProject('gone');
    await s.admin('delete-project', gone.id);
    for (const id of [randomUUID(), 'not-a-uuid', foreign.id, gone.id])
      await expectError(await s.request(`/v1/organization/projects/${id}/api-keys`), 404, 'project_not_found');
  });

  it('a read-only key may list keys', async () => {
    const ro = await createKey(s.projectId, '--read-only');
    expect((await s.request(`/v1/organization/projects/${s.projectId}/api-keys`, { key: ro.api_key })).status).toBe(200);
  });
});

describe('DELETE /v1/organization/projects/{project_id}/api-keys/{key_id}', () => {
  it('204 with an empty body; the deleted key is refused on the very next request and leaves the listing', async () => {
    const p = await createProject('delete-key');
    const victim = await createKey(p.id, '--name', 'victim');
    expect((await s.request('/v1/files/count', { key: victim.api_key })).status).toBe(200);
    const res = await s.request(`/v1/organization/projects/${p.id}/api-keys/${victim.id}`, { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    await expectError(await s.request('/v1/files/count', { key: victim.api_key }), 401, 'unauthenticated');
    const { api_keys } = (await (await s.request(`/v1/organization/projects/${p.id}/api-keys`)).json()) as { api_keys: { id: string }[] };
    expect(api_keys.map((k) => k.id)).not.toContain(victim.id);
    // Deleting it again: the key is gone.
    await expectError(await s.request(`/v1/organization/projects/${p.id}/api-keys/${victim.id}`, { method: 'DELETE' }), 404, 'api_key_not_found');
  });

  it('a key may delete itself; its own next request is refused', async () => {
    const p = await createProject('self-delete');
    const self = await createKey(p.id);
    const res = await s.request(`/v1/organization/projects/${p.id}/api-keys/${self.id}`, { method: 'DELETE', key: self.api_key });
    expect(res.status).toBe(204);
    await expectError(await s.request('/v1/organization', { key: self.api_key }), 401, 'unauthenticated');
  });

  it('404 for an unknown key, a key of another project, an unknown or foreign project; nothing is deleted', async () => {
    const p1 = await createProject('del-1');
    const p2 = await createProject('del-2');
    const k2 = await createKey(p2.id);
    const other = await s.admin<{ id: string }>('create-organization', '--name', 'Del org');
    const foreign = await createProject('del-foreign', '--organization', other.id);
    const kf = await createKey(foreign.id);
    await expectError(await s.request(`/v1/organization/projects/${p1.id}/api-keys/${randomUUID()}`, { method: 'DELETE' }), 404, 'api_key_not_found');
    await expectError(await s.request(`/v1/organization/projects/${p1.id}/api-keys/${k2.id}`, { method: 'DELETE' }), 404, 'api_key_not_found');
    await expectError(await s.request(`/v1/organization/projects/${randomUUID()}/api-keys/${k2.id}`, { method: 'DELETE' }), 404, 'project_not_found');
    await expectError(await s.request(`/v1/organization/projects/${foreign.id}/api-keys/${kf.id}`, { method: 'DELETE' }), 404, 'project_not_found');
    // Both keys still work.
    expect((await s.request('/v1/files/count', { key: k2.api_key })).status).toBe(200);
    expect((await s.request('/v1/files/count', { key: kf.api_key })).status).toBe(200);
  }, 60_000);

  it('403 for a read-only key (deletion needs organization:write); the key survives', async () => {
    const p = await createProject('ro-delete');
    const target = await createKey(p.id);
    const ro = await createKey(p.id, '--read-only');
    const res = await s.request(`/v1/organization/projects/${p.id}/api-keys/${target.id}`, { method: 'DELETE', key: ro.api_key });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).error_type).toBe('permission_denied');
    expect((await s.request('/v1/files/count', { key: target.api_key })).status).toBe(200);
  });
});

describe('parlance admin delete-project', () => {
  it('soft-deletes: keys are refused, listings skip it, a second delete and unknown ids fail', async () => {
    const p = await createProject('to-delete');
    const k = await createKey(p.id);
    expect((await s.request('/v1/files/count', { key: k.api_key })).status).toBe(200);
    const out = await s.admin<{ id: string; deleted_at: string }>('delete-project', p.id);
    expect(out.id).toBe(p.id);
    expect(Date.parse(out.deleted_at)).not.toBeNaN();
    const res = await s.request('/v1/files/count', { key: k.api_key });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).message).toMatch(/deleted project/);
    const listed = await s.admin<{ projects: { id: string }[] }>('list-projects');
    expect(listed.projects.map((x) => x.id)).not.toContain(p.id);
    await expect(s.admin('delete-project', p.id)).rejects.toThrow(/already deleted/);
    await expect(s.admin('delete-project', randomUUID())).rejects.toThrow(/no such project/);
    await expect(s.admin('create-key', '--project', p.id)).rejects.toThrow(/no such project/);
  }, 60_000);
});
