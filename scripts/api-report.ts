/**
 * @module The API report: for each public entry of package.json `exports`, API Extractor reads
 * its built declarations (dist/…d.ts) and writes every exported name with its signature, and
 * each type those signatures reach, to etc/<entry>.api.md. `npm run api:check` (in .ci/run,
 * after the build) fails when a report no longer matches the build, so an export cannot be
 * added, removed or changed by accident; `npm run api:report` builds and rewrites the reports
 * after an intended change, to be committed with it.
 *
 * Usage: tsx scripts/api-report.ts [--update]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel, ExtractorMessageCategory, type ExtractorMessage, type IConfigFile } from '@microsoft/api-extractor';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types: string }> };

/** The report's file name for an entry: `index` for the root, else the subpath (`./ai-sdk` → `ai-sdk`). */
const reportName = (subpath: string) => (subpath === '.' ? 'index' : subpath.slice(2).replace(/\//g, '-'));

/** Where API Extractor writes the report it compares (outside dist, which is published). */
const scratch = mkdtempSync(path.join(tmpdir(), 'aov-api-report-'));

function configFor(subpath: string, declarations: string): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: declarations,
    compiler: {
      // Only the entry's declarations and what they import, not the project's sources.
      overrideTsconfig: {
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, skipLibCheck: true },
        files: [declarations],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: reportName(subpath),
      reportFolder: path.join(root, 'etc'),
      reportTempFolder: scratch,
      // Types the exports reach without exporting them by name are part of the surface too.
      includeForgottenExports: true,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Error },
        // Release tags (@public, @beta) are not used: every exported name is public.
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        // A type reached but not exported by name is part of the report (includeForgottenExports), not
        // refused; not noted either, since the note names a line of a .d.ts and would change with any comment.
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // TSDoc on every exported name is held by test/public-api.test.ts, not here (this counts every member).
        'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      },
      // Comments are written for people and editors (Markdown-ish, `@module` headers), not to TSDoc's strict grammar.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

mkdirSync(path.join(root, 'etc'), { recursive: true });
let failed = 0;
for (const [subpath, target] of Object.entries(pkg.exports)) {
  const declarations = path.join(root, target.types);
  const name = `${pkg.name}${subpath.slice(1)}`;
  if (!existsSync(declarations)) {
    console.error(`${name}: ${target.types} is missing; build first (npm run build)`);
    failed++;
    continue;
  }
  const config = ExtractorConfig.prepare({
    configObject: configFor(subpath, declarations),
    configObjectFullPath: path.join(root, 'scripts', 'api-report.json'),
    packageJsonFullPath: path.join(root, 'package.json'),
  });
  const problems: string[] = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    messageCallback(message: ExtractorMessage) {
      message.handled = true;
      // Console messages narrate the run (a report created or copied); the outcome is reported below.
      if (message.category === ExtractorMessageCategory.Console) return;
      if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) problems.push(message.formatMessageWithLocation(root));
    },
  });
  const report = path.relative(root, config.reportFilePath);
  for (const p of problems) console.error(`${name}: ${p}`);
  if (result.apiReportChanged && !update) {
    const diff = spawnSync('git', ['diff', '--no-index', '--no-color', config.reportFilePath, config.reportTempFilePath], { encoding: 'utf8' });
    console.error(`${name}: the API differs from ${report}:\n${diff.stdout}`);
    console.error(`If the change is intended, run \`npm run api:report\` and commit ${report} with it.`);
    failed++;
  } else if (problems.length > 0 || !result.succeeded) {
    failed++;
  } else {
    console.log(`${name}: ${update && result.apiReportChanged ? 'updated' : 'matches'} ${report}`);
  }
}
rmSync(scratch, { recursive: true, force: true });
process.exitCode = failed > 0 ? 1 : 0;
