import type { Figure, TargetCheck } from './context.js';

/** A target judged on one number: this run's verdict, and the figure the median of several runs is taken of. */
export function figureTarget(target: string, value: string, figure: Figure): TargetCheck {
  return { target, value, pass: meets(figure, figure.value), figure };
}

/** A throughput ratio (the shim ÷ a baseline) that must reach `atLeast`. */
export function ratioTarget(target: string, measured: number, atLeast: number): TargetCheck {
  return figureTarget(target, `${measured}×`, { value: measured, atLeast });
}

/** Whether `value` is on the right side of the figure's line. */
export function meets(figure: Figure, value: number): boolean {
  if ('atLeast' in figure) return value >= figure.atLeast;
  if ('atMost' in figure) return value <= figure.atMost;
  return value < figure.under;
}
