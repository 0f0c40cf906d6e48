// A Mantine Tooltip mounted on first use: until the pointer enters (or focus reaches) its child, the child renders
// alone. A closed Tooltip still costs a floating-ui instance and a layout read per render, which a table of 100 rows
// with a few tooltips each pays hundreds of times (issue 30: /responders?size=100 blocked the page for seconds).
import { Tooltip } from "@mantine/core";
import { cloneElement, useState, type ReactElement, type ReactNode, type SyntheticEvent } from "react";

type Handlers = { onPointerEnter?: (e: SyntheticEvent) => void; onFocus?: (e: SyntheticEvent) => void };

export function LazyTooltip({ label, children, openDelay = 300 }: { label: ReactNode; children: ReactElement<Handlers>; openDelay?: number }) {
  const [armed, setArmed] = useState(false);
  if (armed)
    return (
      <Tooltip label={label} openDelay={openDelay}>
        {children}
      </Tooltip>
    );
  const own = children.props;
  return cloneElement(children, {
    onPointerEnter: (e: SyntheticEvent) => {
      own.onPointerEnter?.(e);
      setArmed(true);
    },
    onFocus: (e: SyntheticEvent) => {
      own.onFocus?.(e);
      setArmed(true);
    },
  });
}
