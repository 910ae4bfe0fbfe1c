"""The snapshot of a candidate's database that DB cases (db_cases.py) are validated against."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

from .server import APP_DATABASE

SNAPSHOT_ROWS = 5

# system schemas as in server.is_system_schema
_TABLES_SQL = """
SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.column_default
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND c.table_schema NOT LIKE 'pg_toast%' AND c.table_schema NOT LIKE 'pg_temp%'
ORDER BY c.table_schema, c.table_name, c.ordinal_position
"""

_CONSTRAINTS_SQL = """
SELECT n.nspname, r.relname, con.contype,
       array(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord)::text[],
       fn.nspname, fr.relname,
       array(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord)::text[]
FROM pg_constraint con
JOIN pg_class r ON r.oid = con.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
LEFT JOIN pg_class fr ON fr.oid = con.confrelid LEFT JOIN pg_namespace fn ON fn.oid = fr.relnamespace
WHERE con.contype IN ('p', 'u', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY n.nspname, r.relname, con.conname
"""

# A `CREATE UNIQUE INDEX` enforces uniqueness like a UNIQUE constraint but has no pg_constraint
# row. Only valid, non-partial indexes on plain columns count (a partial or expression index
# does not make the columns themselves unique); indexes behind a constraint are listed above.
_UNIQUE_INDEXES_SQL = """
SELECT n.nspname, r.relname,
       array(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.num
             WHERE k.ord <= i.indnkeyatts ORDER BY k.ord)::text[]
FROM pg_index i
JOIN pg_class r ON r.oid = i.indrelid JOIN pg_namespace n ON n.oid = r.relnamespace
JOIN pg_class ix ON ix.oid = i.indexrelid
WHERE i.indisunique AND NOT i.indisprimary AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
  AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY n.nspname, r.relname, ix.relname
"""


def _table_key(schema: str, name: str) -> str:
    return name if schema == "public" else f"{schema}.{name}"


def jsonable(value: Any) -> Any:
    """A database value as JSON: numbers stay numbers, times become ISO strings."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def take_snapshot(connection: Any, rows: int = SNAPSHOT_ROWS) -> dict[str, Any]:
    """The JSON document DB cases are validated against.

    ``{"database": ..., "tables": {name: {schema, columns: {col: {type, udt, nullable, default}},
    primary_key, unique: [[cols]], foreign_keys: [{columns, references, ref_columns}], row_count,
    rows: [first rows by primary key]}}}``; tables outside ``public`` are keyed ``schema.name``.
    ``unique`` lists UNIQUE constraints, then unique indexes on plain columns (``CREATE UNIQUE
    INDEX``): the spec's "a unique constraint on (a, b)" holds either way.
    """
    from psycopg import sql
    from psycopg.rows import dict_row

    tables: dict[str, dict[str, Any]] = {}
    with connection.cursor() as cursor:
        for schema, name, column, data_type, udt, nullable, default in cursor.execute(_TABLES_SQL).fetchall():
            table = tables.setdefault(
                _table_key(schema, name),
                {"schema": schema, "name": name, "columns": {}, "primary_key": [], "unique": [], "foreign_keys": [], "row_count": 0, "rows": []},
            )
            table["columns"][column] = {"type": data_type, "udt": udt, "nullable": nullable == "YES", "default": default}
        for schema, name, kind, columns, ref_schema, ref_name, ref_columns in cursor.execute(_CONSTRAINTS_SQL).fetchall():
            owner = tables.get(_table_key(schema, name))
            if owner is None:
                continue
            if kind == "p":
                owner["primary_key"] = list(columns)
            elif kind == "u":
                owner["unique"].append(list(columns))
            else:
                owner["foreign_keys"].append({"columns": list(columns), "references": _table_key(ref_schema, ref_name), "ref_columns": list(ref_columns)})
        for schema, name, columns in cursor.execute(_UNIQUE_INDEXES_SQL).fetchall():
            owner = tables.get(_table_key(schema, name))
            if owner is not None and list(columns) not in owner["unique"]:
                owner["unique"].append(list(columns))
    for table in tables.values():
        ident = sql.Identifier(table["schema"], table["name"])
        with connection.cursor() as cursor:
            table["row_count"] = int(cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(ident)).fetchone()[0])
        order = sql.SQL(", ").join(sql.Identifier(c) for c in table["primary_key"]) if table["primary_key"] else sql.SQL("1")
        with connection.cursor(row_factory=dict_row) as cursor:
            fetched = cursor.execute(sql.SQL("SELECT * FROM {} ORDER BY {} LIMIT {}").format(ident, order, sql.Literal(rows))).fetchall()
        table["rows"] = [{k: jsonable(v) for k, v in row.items()} for row in fetched]
    connection.rollback()
    return {"database": APP_DATABASE, "tables": dict(sorted(tables.items()))}

