// A spec's own text in its review: the intent, behaviors, constraints and invariants the changes
// are judged against, in a folded section below the review (open it to read it beside the diff).
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import { plural } from '../common/format.ts';

export function SpecText({ spec }: { spec: SpecReconcileState }) {
  const rules = spec.behaviors.length + spec.constraints.length + spec.invariants.length;
  return (
    <details className="spec-text">
      <summary className="spec-text__summary">
        Spec text: intent
        {rules > 0 &&
          `, ${[
            spec.behaviors.length > 0 ? plural(spec.behaviors.length, 'behavior') : '',
            spec.constraints.length > 0 ? plural(spec.constraints.length, 'constraint') : '',
            spec.invariants.length > 0 ? plural(spec.invariants.length, 'invariant') : '',
          ]
            .filter(Boolean)
            .join(', ')}`}
      </summary>
      <p className="spec-detail__intent">{spec.intent}</p>
      <SpecRules spec={spec} />
    </details>
  );
}

/** The spec's behaviors, constraints and invariants: what the diff is judged against. */
function SpecRules({ spec }: { spec: SpecReconcileState }) {
  if (spec.behaviors.length + spec.constraints.length + spec.invariants.length === 0) return null;
  return (
    <div className="spec-rules">
      {spec.behaviors.length > 0 && (
        <section aria-label="Behaviors">
          <h4 className="spec-detail__subheading">Behaviors ({spec.behaviors.length})</h4>
          <ul className="spec-rules__list">
            {spec.behaviors.map((behavior) => (
              <li key={behavior.name}>
                <strong>{behavior.name}</strong>
                <span className="spec-rules__clause">
                  <em>Given</em> {behavior.given}
                </span>
                <span className="spec-rules__clause">
                  <em>Then</em> {behavior.then}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {(
        [
          ['Constraints', spec.constraints],
          ['Invariants', spec.invariants],
        ] as const
      ).map(
        ([label, items]) =>
          items.length > 0 && (
            <section key={label} aria-label={label}>
              <h4 className="spec-detail__subheading">
                {label} ({items.length})
              </h4>
              <ul className="spec-rules__list">
                {items.map((item) => (
                  <li key={item}>{item}</li>
                ))}
              </ul>
            </section>
          ),
      )}
    </div>
  );
}
