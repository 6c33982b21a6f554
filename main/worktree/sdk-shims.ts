// The worktree bundle's stand-in for `@modelcontextprotocol/server/_shims` (the SDK's per-runtime
// module; scripts/build-worktree.ts points the SDK here). On Node the SDK's own shim builds its
// default JSON Schema validator from Ajv at load, ~15 ms of every worktree process's start, for
// validating elicitation answers, which Grove's servers never ask for. This one exports the same
// two things and loads Ajv (the SDK's own validator) only if a validator is ever requested.
import { createRequire } from 'node:module';
import process from 'node:process';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';

type Validators = Pick<AjvJsonSchemaValidator, 'getValidator'>;

export class DefaultJsonSchemaValidator implements Validators {
  #ajv: Validators | undefined;

  getValidator: Validators['getValidator'] = (schema) => {
    if (this.#ajv === undefined) {
      const { AjvJsonSchemaValidator: Ajv } = createRequire(import.meta.url)(
        '@modelcontextprotocol/server/validators/ajv',
      ) as { AjvJsonSchemaValidator: new () => Validators };
      this.#ajv = new Ajv();
    }
    return this.#ajv.getValidator(schema);
  };
}

export { process };
