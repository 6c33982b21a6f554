// A spec named by a client (`spec_path` of get_spec_diff and get_changed_artifacts): it must be
// inside the worktree, an existing `*.spec.yaml` under `.notarai/`, and valid.
import { resolveInsideRoot } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { isSpecPath, loadSpec, NOTARAI_DIR, type ValidSpec } from './spec-loader.ts';

/** Checks `spec_path`: inside the worktree, an existing `*.spec.yaml` under `.notarai/`. */
export async function checkSpecPath(root: string, requested: string): Promise<string> {
  let relative: string;
  try {
    relative = (await resolveInsideRoot(root, requested)).relativePath;
  } catch (error) {
    if (error instanceof UserError && error.message.startsWith('no such file or directory')) {
      throw new UserError(
        `spec not found: ${JSON.stringify(requested)}; list the specs with list_affected_specs ` +
          `or look under ${NOTARAI_DIR}/`,
      );
    }
    throw error;
  }
  if (!isSpecPath(relative)) {
    throw new UserError(
      `spec_path must name a *.spec.yaml file under ${NOTARAI_DIR}/ (got ${JSON.stringify(requested)})`,
    );
  }
  return relative;
}

/** Loads a spec a client named; an invalid one is a UserError listing its problems. */
export async function loadValidSpec(root: string, relative: string): Promise<ValidSpec> {
  const loaded = await loadSpec(root, relative);
  if (!loaded.ok) {
    const problems = loaded.errors
      .map(
        (error) =>
          `  ${error.file}${error.line === null ? '' : `:${error.line}`}: ${error.message}`,
      )
      .join('\n');
    throw new UserError(`spec ${relative} is invalid:\n${problems}`);
  }
  return loaded;
}
