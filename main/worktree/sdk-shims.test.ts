// The bundle's SDK shim: its validator still validates (loading Ajv on first use).
import { describe, expect, it } from 'vitest';
import { DefaultJsonSchemaValidator, process as shimProcess } from './sdk-shims.ts';

describe('worktree SDK shims', () => {
  it('validates JSON Schema like the SDK default, and passes process through', () => {
    const validate = new DefaultJsonSchemaValidator().getValidator<{ answer: number }>({
      type: 'object',
      properties: { answer: { type: 'number' } },
      required: ['answer'],
    });
    expect(validate({ answer: 42 })).toMatchObject({ valid: true, data: { answer: 42 } });
    const refused = validate({ answer: 'forty-two' });
    expect(refused.valid).toBe(false);
    expect(refused.errorMessage).toMatch(/number/);
    expect(shimProcess).toBe(process);
  });
});
