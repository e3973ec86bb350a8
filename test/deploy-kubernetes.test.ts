import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { DEFAULT_SHUTDOWN_GRACE_MS } from '@maitento/server';

// deploy/kubernetes (kubectl apply -k) and deploy/helm/maitento make the same objects. Every object is validated
// against the Kubernetes OpenAPI schemas (kubernetes-models: required fields, types, enums), and the essentials
// (names, ports, probes, security context) are checked in both; kubectl renders the manifests when on PATH (Debian's
// kubernetes-client), helm lints and renders the chart when on PATH or installed by scripts/helm.sh (.helm/).
const root = fileURLToPath(new URL('..', import.meta.url));
const plainDir = join(root, 'deploy/kubernetes');
const chartDir = join(root, 'deploy/helm/maitento');

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects as parsed from YAML.
type K8sObject = any;

const MODULES: Record<string, string> = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'batch/v1': 'kubernetes-models/batch/v1',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
};

/** Throws naming the object and the schema's complaint when `object` is not a valid Kubernetes object. */
async function validate(object: K8sObject): Promise<void> {
  const where = `${object?.kind} ${object?.metadata?.name}`;
  const path = MODULES[object?.apiVersion];
  if (!path) throw new Error(`${where}: apiVersion ${object?.apiVersion} is not one this test knows`);
  const module = (await import(path)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[object.kind];
  if (!Model) throw new Error(`${where}: no kind ${object.kind} in ${object.apiVersion}`);
  try {
    new Model(object).validate();
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}

function documents(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw doc.errors[0];
      return doc.toJS();
    })
    .filter((object) => object !== null);
}

function plainObjects(): K8sObject[] {
  return readdirSync(plainDir)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) => documents(readFileSync(join(plainDir, file), 'utf8')));
}

const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

const onPath = (program: string) =>
  (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, program)));

/** The helm to run: the one on PATH, else the one scripts/helm.sh installed (Debian has no helm package). */
const HELM_VERSION = '4.1.4';
const helm = onPath('helm')
  ? 'helm'
  : existsSync(join(root, '.helm', HELM_VERSION, 'helm'))
    ? join(root, '.helm', HELM_VERSION, 'helm')
    : undefined;

/** The essentials every rendering of Maitento must have, whoever rendered it. */
function expectEssentials(objects: K8sObject[], secretName: string) {
  for (const object of objects)
    expect(object.metadata.labels?.['app.kubernetes.io/name'], object.kind).toBe('maitento');
  const server = find(objects, 'Deployment', 'maitento-server');
  const worker = find(objects, 'Deployment', 'maitento-worker');
  const service = find(objects, 'Service', 'maitento');
  for (const deployment of [server, worker]) {
    const pod = deployment.spec.template;
    // The selector picks the Deployment's own pods.
    for (const [k, v] of Object.entries(deployment.spec.selector.matchLabels)) expect(pod.metadata.labels[k]).toBe(v);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    const [container] = pod.spec.containers;
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(pod.spec.volumes.find((v: K8sObject) => v.name === 'tmp').emptyDir).toBeDefined();
    expect(container.envFrom).toContainEqual({ secretRef: { name: secretName } });
    expect(container.envFrom).toContainEqual({ configMapRef: { name: 'maitento-config' } });
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
    // The orchestrator's grace exceeds the process's own (MT_SHUTDOWN_GRACE_MS): it exits before being killed.
    expect(pod.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(DEFAULT_SHUTDOWN_GRACE_MS);
  }
  const [serve] = server.spec.template.spec.containers;
  expect(serve.command.slice(2, 3)).toEqual(['serve']);
  expect(serve.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
  expect(serve.command).toEqual(expect.arrayContaining(['--host', '0.0.0.0', '--port', '8080']));
  expect(serve.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
  expect(serve.startupProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
  expect(serve.readinessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
  const [work] = worker.spec.template.spec.containers;
  expect(work.command.slice(2)).toEqual(['worker']);
  // The worker's live and ready routes on its health port, which it is told to open on every address.
  expect(work.ports).toEqual([{ name: 'health', containerPort: 8081 }]);
  expect(work.env).toEqual([
    { name: 'MT_WORKER_HEALTH_PORT', value: '8081' },
    { name: 'MT_WORKER_HEALTH_HOST', value: '0.0.0.0' },
  ]);
  expect(work.startupProbe.httpGet).toEqual({ path: '/health/live', port: 'health' });
  expect(work.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'health' });
  expect(work.readinessProbe.httpGet).toEqual({ path: '/health', port: 'health' });
  // The Service sends to the servers' http port, and only to servers.
  expect(service.spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
  for (const [k, v] of Object.entries(service.spec.selector)) expect(server.spec.template.metadata.labels[k]).toBe(v);
  expect(service.spec.selector['app.kubernetes.io/component']).toBe('server');
  // A disruption budget for each Deployment, selecting its pods.
  for (const deployment of [server, worker]) {
    const pdb = find(objects, 'PodDisruptionBudget', deployment.metadata.name);
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
  }
}

describe('deploy/kubernetes (kubectl apply -k)', () => {
  it('every object is valid against the Kubernetes schemas', async () => {
    const objects = plainObjects();
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/maitento-config',
      'Deployment/maitento-server',
      'Deployment/maitento-worker',
      'Ingress/maitento',
      'Job/maitento-migrate',
      'PodDisruptionBudget/maitento-server',
      'PodDisruptionBudget/maitento-worker',
      'Service/maitento',
    ]);
    for (const object of objects) await validate(object);
  });

  it('the validator refuses an object the API server would refuse (a string where a port number goes)', async () => {
    const server = structuredClone(find(plainObjects(), 'Deployment', 'maitento-server'));
    server.spec.template.spec.containers[0].ports[0].containerPort = '8080';
    await expect(validate(server)).rejects.toThrow(/containerPort must be integer/);
  });

  it('has the essentials: names, ports, probes, non-root and read-only containers, budgets', () => {
    expectEssentials(plainObjects(), 'maitento-secrets');
  });

  it('the kustomization lists files that exist and makes the Secret the pods read', () => {
    const kustomization = parseYaml(readFileSync(join(plainDir, 'kustomization.yaml'), 'utf8'));
    for (const file of kustomization.resources) expect(existsSync(join(plainDir, file)), file).toBe(true);
    expect(kustomization.secretGenerator).toEqual([
      { name: 'maitento-secrets', envs: ['secret.env'], options: { disableNameSuffixHash: true } },
    ]);
    const example = readFileSync(join(plainDir, 'secret.env.example'), 'utf8');
    for (const name of ['DATABASE_URL', 'MT_SECRET_KEY']) expect(example).toMatch(new RegExp(`^${name}=`, 'm'));
  });

  it('kubectl kustomize renders it, and every rendered object is valid', async (ctx) => {
    if (!onPath('kubectl')) ctx.skip('kubectl is not on PATH: the rendering by kustomize was not checked here');
    const dir = mkdtempSync(join(tmpdir(), 'mt-kustomize-'));
    try {
      cpSync(plainDir, dir, { recursive: true });
      copyFileSync(join(plainDir, 'secret.env.example'), join(dir, 'secret.env'));
      const rendered = documents(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 30_000 }));
      // kustomize folds a long base64 value over lines, which the API server's decoder (Go's, skipping newlines)
      // reads and the schema's "byte" format does not: unfolded before validating.
      const secret = find(rendered, 'Secret', 'maitento-secrets');
      for (const key of Object.keys(secret.data)) secret.data[key] = secret.data[key].replace(/\s/g, '');
      expect(Buffer.from(secret.data.DATABASE_URL, 'base64').toString()).toMatch(/^postgres:\/\/.*sslmode=verify-full/);
      for (const object of rendered) await validate(object);
      expectEssentials(
        rendered.filter((o) => o.kind !== 'Secret'),
        'maitento-secrets',
      );
      expect(find(rendered, 'Deployment', 'maitento-server').spec.template.spec.containers[0].image).toBe(
        'maitento:0.1.0',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/helm/maitento', () => {
  const values = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  const template = (name: string) => readFileSync(join(chartDir, 'templates', name), 'utf8');

  it('agrees with the plain manifests on names, port, probes, grace, resources and budgets', () => {
    const plain = plainObjects();
    const server = find(plain, 'Deployment', 'maitento-server').spec.template.spec;
    const worker = find(plain, 'Deployment', 'maitento-worker').spec.template.spec;
    expect(parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8'))).toMatchObject({
      apiVersion: 'v2',
      name: 'maitento',
    });
    // Names: with the release named "maitento", the chart's objects are named as the plain ones.
    expect(template('server.yaml')).toContain('name: {{ include "maitento.fullname" . }}-server');
    expect(template('worker.yaml')).toContain('name: {{ include "maitento.fullname" . }}-worker');
    expect(template('configmap.yaml')).toContain('name: {{ include "maitento.fullname" . }}-config');
    expect(template('secret.yaml')).toContain('name: {{ include "maitento.fullname" . }}-secrets');
    expect(template('service.yaml')).toContain('name: {{ include "maitento.fullname" . }}\n');
    // Port, probes and commands.
    expect(values.server.port).toBe(server.containers[0].ports[0].containerPort);
    expect(values.probes.livenessPath).toBe(server.containers[0].livenessProbe.httpGet.path);
    expect(values.probes.readinessPath).toBe(server.containers[0].readinessProbe.httpGet.path);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const block = new RegExp(`${probe}:\\n\\s+httpGet:\\n\\s+path: \\{\\{ \\.Values\\.probes\\.(\\w+) \\}\\}`);
      const path = values.probes[block.exec(template('server.yaml'))?.[1] ?? 'none'];
      expect(path, probe).toBe(server.containers[0][probe].httpGet.path);
      expect(template('server.yaml'), probe).toContain(`${probe}:`);
    }
    const command = (text: string) =>
      JSON.parse(
        (/command: (\[.*\])/.exec(text)?.[1] ?? '[]').replace('{{ .Values.server.port }}', String(values.server.port)),
      );
    expect(command(template('server.yaml'))).toEqual(server.containers[0].command);
    expect(command(template('worker.yaml'))).toEqual(worker.containers[0].command);
    expect(values.worker.healthPort).toBe(worker.containers[0].ports[0].containerPort);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const block = new RegExp(
        `${probe}:\\n\\s+httpGet:\\n\\s+path: \\{\\{ \\.Values\\.probes\\.(\\w+) \\}\\}\\n\\s+port: health`,
      );
      const path = values.probes[block.exec(template('worker.yaml'))?.[1] ?? 'none'];
      expect(path, probe).toBe(worker.containers[0][probe].httpGet.path);
    }
    // Grace, resources, budgets, service.
    expect(values.server.terminationGracePeriodSeconds).toBe(server.terminationGracePeriodSeconds);
    expect(values.worker.terminationGracePeriodSeconds).toBe(worker.terminationGracePeriodSeconds);
    expect(values.server.resources).toEqual(server.containers[0].resources);
    expect(values.worker.resources).toEqual(worker.containers[0].resources);
    expect(values.server.pdb.minAvailable).toBe(
      find(plain, 'PodDisruptionBudget', 'maitento-server').spec.minAvailable,
    );
    expect(values.worker.pdb.maxUnavailable).toBe(
      find(plain, 'PodDisruptionBudget', 'maitento-worker').spec.maxUnavailable,
    );
    const service = find(plain, 'Service', 'maitento').spec;
    expect(values.service.port).toBe(service.ports[0].port);
    expect(values.service.sessionAffinity).toBe(service.sessionAffinity);
    expect(values.ingress.annotations).toEqual(find(plain, 'Ingress', 'maitento').metadata.annotations);
    // Non-root, read-only root filesystem, /tmp as emptyDir: in the helpers every container and pod includes.
    const helpers = template('_helpers.tpl');
    for (const line of ['runAsNonRoot: true', 'runAsUser: 1000', 'readOnlyRootFilesystem: true', 'mountPath: /tmp'])
      expect(helpers).toContain(line);
    for (const name of ['server.yaml', 'worker.yaml', 'migrate-job.yaml']) {
      expect(template(name)).toContain('include "maitento.podCommon"');
    }
    for (const name of ['server.yaml', 'worker.yaml'])
      expect(template(name)).toContain('include "maitento.containerCommon"');
    // The migration Job runs before the release's Secret and ConfigMap exist: its own environment, the same security.
    expect(template('migrate-job.yaml')).toContain('include "maitento.containerSecurity"');
    expect(template('_helpers.tpl')).toMatch(
      /define "maitento.containerCommon"[\s\S]*include "maitento.containerSecurity"/,
    );
    // With the Job on, the processes do not migrate; the Job runs `mt migrate`.
    expect(template('configmap.yaml')).toMatch(
      /if \.Values\.migrations\.job\.enabled \}\}\n(.*\n)?\s+MT_MIGRATE: "off"/,
    );
    expect(values.migrations.job.command).toEqual(['node', 'packages/cli/bin/mt.js', 'migrate']);
    expect(find(plainObjects(), 'Job', 'maitento-migrate').spec.template.spec.containers[0].command).toEqual(
      values.migrations.job.command,
    );
  });

  it('helm lint passes and helm template renders valid objects with the essentials', async (ctx) => {
    if (helm === undefined) {
      ctx.skip(
        'helm is neither on PATH nor in .helm/ (no Debian package): run scripts/helm.sh; the chart was checked as text only',
      );
    }
    const set = ['--set', 'secrets.secretKey=test-key', '--set', 'database.url=postgres://u:p@db:5432/maitento'];
    execFileSync(helm as string, ['lint', '--strict', chartDir, ...set], { encoding: 'utf8', timeout: 60_000 });
    const rendered = documents(
      execFileSync(
        helm as string,
        [
          'template',
          'maitento',
          chartDir,
          ...set,
          '--set',
          'ingress.enabled=true',
          '--set',
          'migrations.job.enabled=true',
        ],
        { encoding: 'utf8', timeout: 60_000 },
      ),
    );
    for (const object of rendered) await validate(object);
    expectEssentials(
      rendered.filter((o) => o.kind !== 'Secret' && o.kind !== 'Job'),
      'maitento-secrets',
    );
    expect(find(rendered, 'Job', 'maitento-migrate').metadata.annotations['helm.sh/hook']).toBe(
      'pre-install,pre-upgrade',
    );
  });
});

describe('the Dockerfile', () => {
  it('runs as a numeric non-root user, so runAsNonRoot can verify it', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const users = [...dockerfile.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBe('1000:1000');
  });
});
