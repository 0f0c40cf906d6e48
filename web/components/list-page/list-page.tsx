// The one list-page pattern every resource uses: header with the create action, `q` search, tag filter (any/all),
// a server-side paged and sorted table, row actions (edit, duplicate, copy id, delete with confirmation), and
// loading, error and empty states (a search that finds nothing offers the search palette: "Search everywhere for …").
// All of its state is in the URL (use-list-state.ts).
import { ActionIcon, Button, Group, Menu, MultiSelect, SegmentedControl, Stack, Text, TextInput, VisuallyHidden } from "@mantine/core";
import { useDebouncedCallback } from "@mantine/hooks";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { DataTable, type DataTableColumn } from "mantine-datatable";
import { startTransition, useEffect, useState, type ReactNode } from "react";
import type { ListQuery } from "../../api/types";
import { copyWithToast } from "../copy-button";
import { openPalette } from "../palette-store";
import { PageHeader } from "../page-header";
import { EmptyState, ErrorState } from "../states";
import { useAllTags } from "../tags/use-all-tags";
import { PAGE_SIZES, toListQuery, type ListState } from "./use-list-state";

export interface ListRow {
  id: string;
  name: string;
}

export interface ListPageProps<T extends ListRow> {
  title: string;
  description: ReactNode;
  /** Query key root of the resource ("tags"); mutations invalidate it. */
  resource: string;
  /** "tag", "secret": used in labels and confirmations. */
  noun: string;
  fetchPage: (q: ListQuery) => Promise<{ items: T[]; total: number }>;
  columns: DataTableColumn<T>[];
  taggable?: boolean;
  state: ListState;
  update: (patch: Partial<ListState>, opts?: { replace?: boolean }) => void;
  empty: { title: string; body: ReactNode };
  onDelete: (row: T) => void;
  /** Extra header actions next to the create button. */
  actions?: ReactNode;
  /** The tool's Help link (features/help/help-link.tsx), first among the header's actions. */
  help?: ReactNode;
  /** Shown between the header and the filters (e.g. totals). */
  above?: ReactNode;
  /** Where create/edit/duplicate go when not to this page's dialog (e.g. a full-page editor). */
  onCreate?: () => void;
  onEdit?: (row: T) => void;
  onDuplicate?: (row: T) => void;
  /** Extra row menu items (`<Menu.Item>`s) after Edit/Duplicate, e.g. "Export…". */
  rowActions?: (row: T) => ReactNode;
  /** Hide "Duplicate" where a copy makes no sense (a private key's material cannot be copied). */
  canDuplicate?: boolean;
  /** Shown between the filters and the table (e.g. "2 trackers are failing"). */
  banner?: ReactNode;
  /** Refetch the page every n ms while this returns a number (e.g. while a listed item is busy). */
  refetchInterval?: (items: T[]) => number | false;
}

function RowActions<T extends ListRow>({
  row,
  noun,
  onEdit,
  onDuplicate,
  onDelete,
  extra,
}: {
  row: T;
  noun: string;
  onEdit: (row: T) => void;
  onDuplicate?: (row: T) => void;
  onDelete: (row: T) => void;
  extra?: ReactNode;
}) {
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <ActionIcon variant="subtle" color="gray" aria-label={`Actions for ${row.name}`}>
          <span aria-hidden="true" style={{ fontSize: 18, lineHeight: 1 }}>
            ⋯
          </span>
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item onClick={() => onEdit(row)}>Edit</Menu.Item>
        {onDuplicate && <Menu.Item onClick={() => onDuplicate(row)}>Duplicate</Menu.Item>}
        {extra}
        <Menu.Item onClick={() => copyWithToast(row.id, "ID")}>Copy ID</Menu.Item>
        <Menu.Divider />
        <Menu.Item c="var(--app-danger-text)" onClick={() => onDelete(row)}>
          Delete {noun}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

/** Rows rendered at first; a longer page renders the rest right after, as an interruptible update. */
const FIRST_ROWS = 20;

/**
 * A page of up to 100 rows renders its first FIRST_ROWS at once and the rest in a transition after that first
 * paint, so the first rows show (and the page answers input) without waiting for all of them (issue 30: 100 rows
 * blocked the page for seconds). `view` names what is listed: a new view starts over; a refetch of the same one
 * keeps every row.
 */
function useProgressiveRows<T>(items: T[], view: string): T[] {
  const [shown, setShown] = useState({ view, count: FIRST_ROWS });
  const count = shown.view === view ? shown.count : FIRST_ROWS;
  useEffect(() => {
    if (items.length <= count) return;
    const frame = requestAnimationFrame(() => startTransition(() => setShown({ view, count: Infinity })));
    return () => cancelAnimationFrame(frame);
  }, [items.length, count, view]);
  return items.length > count ? items.slice(0, count) : items;
}

export function ListPage<T extends ListRow>(props: ListPageProps<T>) {
  const { state, update, noun } = props;
  const query = toListQuery(state);
  const list = useQuery({
    queryKey: [props.resource, "list", query],
    queryFn: () => props.fetchPage(query),
    placeholderData: keepPreviousData,
    refetchInterval: props.refetchInterval ? (q) => props.refetchInterval!(q.state.data?.items ?? []) : undefined,
  });
  const tags = useAllTags();
  const [search, setSearch] = useState(state.q);
  const pushSearch = useDebouncedCallback((q: string) => update({ q }, { replace: true }), 300);
  useEffect(() => setSearch(state.q), [state.q]);

  const total = Number(list.data?.total ?? 0);
  const items = list.data?.items ?? [];
  const rows = useProgressiveRows(items, JSON.stringify(query));
  // A page past the end (after deletes, or an old link): go to the last page that has items.
  useEffect(() => {
    if (list.data && items.length === 0 && total > 0 && state.page > 1) update({ page: Math.ceil(total / state.pageSize) }, { replace: true });
  });

  const filtered = state.q.trim() !== "" || state.tags.length > 0;
  const onCreate = props.onCreate ?? (() => update({ dialog: { mode: "create" } }));
  const onEdit = props.onEdit ?? ((row: T) => update({ dialog: { mode: "edit", id: row.id } }));
  const onDuplicate = props.onDuplicate ?? ((row: T) => update({ dialog: { mode: "duplicate", id: row.id } }));
  const createButton = <Button onClick={onCreate}>New {noun}</Button>;
  const columns: DataTableColumn<T>[] = [
    ...props.columns,
    {
      accessor: "actions",
      title: <VisuallyHidden>Actions</VisuallyHidden>,
      textAlign: "right",
      width: 60,
      render: (row) => (
        <RowActions
          row={row}
          noun={noun}
          onEdit={onEdit}
          onDuplicate={props.canDuplicate === false ? undefined : onDuplicate}
          onDelete={props.onDelete}
          extra={props.rowActions?.(row)}
        />
      ),
    },
  ];

  let body: ReactNode;
  if (list.isError && !list.data) body = <ErrorState error={list.error} onRetry={() => list.refetch()} title={`Could not load the ${noun} list`} />;
  else if (list.data && total === 0 && !filtered)
    body = (
      <EmptyState title={props.empty.title} action={createButton}>
        {props.empty.body}
      </EmptyState>
    );
  else
    body = (
      <DataTable<T>
        withTableBorder
        borderRadius="sm"
        highlightOnHover
        minHeight={items.length === 0 ? 180 : undefined}
        records={rows}
        columns={columns}
        fetching={list.isFetching}
        loadingText="Loading"
        noRecordsText={filtered ? `No ${noun} matches these filters` : `No ${noun}s yet`}
        totalRecords={total}
        recordsPerPage={state.pageSize}
        page={state.page}
        onPageChange={(page) => update({ page })}
        recordsPerPageOptions={PAGE_SIZES}
        onRecordsPerPageChange={(pageSize) => update({ pageSize })}
        recordsPerPageLabel="Per page"
        paginationText={({ from, to, totalRecords }) => `${from}–${to} of ${totalRecords}`}
        getPaginationControlProps={(control) => ({ "aria-label": `${control[0]!.toUpperCase()}${control.slice(1)} page` })}
        sortStatus={{ columnAccessor: state.sort as keyof T & string, direction: state.order }}
        onSortStatusChange={(s) => update({ sort: String(s.columnAccessor), order: s.direction })}
      />
    );

  return (
    <Stack gap="sm">
      <PageHeader
        title={props.title}
        description={props.description}
        help={props.help}
        actions={
          <>
            {props.actions}
            {createButton}
          </>
        }
      />
      {props.above}
      {(total > 0 || filtered) && (
        <Group gap="sm" align="flex-end" wrap="wrap">
          <TextInput
            label="Search"
            placeholder="Name or exact ID"
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              pushSearch(e.currentTarget.value);
            }}
            style={{ flex: "1 1 220px" }}
            maw={360}
          />
          {props.taggable && (
            <>
              <MultiSelect
                label="Tags"
                placeholder={state.tags.length ? undefined : "Any tag"}
                data={(tags.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
                value={state.tags}
                onChange={(ids) => update({ tags: ids })}
                searchable
                clearable
                style={{ flex: "1 1 220px" }}
                maw={360}
                comboboxProps={{ withinPortal: true }}
              />
              {state.tags.length > 1 && (
                <SegmentedControl
                  aria-label="Tag match"
                  value={state.match}
                  onChange={(v) => update({ match: v as "any" | "all" })}
                  data={[
                    { value: "any", label: "Any tag" },
                    { value: "all", label: "All tags" },
                  ]}
                />
              )}
            </>
          )}
        </Group>
      )}
      {props.banner}
      {body}
      {list.data && total === 0 && state.q.trim() !== "" && (
        // This list matches names and exact ids; the palette also searches scripts' text, paths and URLs of every tool.
        <Group gap="xs" data-testid="search-everywhere">
          <Text size="sm" c="dimmed">
            This list searches {noun} names and ids only.
          </Text>
          <Button variant="light" size="xs" onClick={() => openPalette(state.q.trim())}>
            Search everywhere for “{state.q.trim()}”
          </Button>
        </Group>
      )}
    </Stack>
  );
}
