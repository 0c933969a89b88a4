"""Server folder sources: the supported files under the folder, compared by mtime + size, then hash."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from sources.folders import FolderFile, FolderRefused, folder_files, outside_reason, read_file, resolve_folder, root_of
from sources.kinds.base import Content, Item, ItemFailed, ItemGone, Listing, SourceUnavailable, Unchanged

logger = logging.getLogger(__name__)


def _folder(source) -> Path:
    """The source's folder, checked again at each sync: the operator may have narrowed
    SOURCES_FOLDERS, or a link on the way may now point elsewhere."""
    try:
        folder = resolve_folder(source.path)
    except FolderRefused as exc:
        raise SourceUnavailable(str(exc)) from None
    if str(folder) != source.path:
        # Where it leads is a server path the readers of the Sources page need not see (the log has it).
        logger.info("folder source %s: %s now leads to %s", source.pk, source.path, folder)
        raise SourceUnavailable(f"{source.path}: a link on its way now leads elsewhere; add the folder it leads "
                                "to as a source instead.")
    return folder


def document_source(folder: Path, key: str) -> str:
    """Document.source of the file `key` of `folder`: its path relative to the allowed root, so two
    folder sources of one collection never claim the same name."""
    root = root_of(folder) or folder
    prefix = folder.relative_to(root).as_posix()
    return key if prefix == "." else f"{prefix}/{key}"


def list_items(source, *, deadline: float | None = None, resume: dict | None = None) -> Listing:
    """The folder's files (a local walk: quick, so neither a deadline nor a resume applies)."""
    folder = _folder(source)
    skipped: list[tuple[str, str]] = []
    files, truncated = folder_files(folder, limit=source.max_pages, skipped=skipped)
    return Listing([Item(file.key, document_source(folder, file.key)) for file in files], truncated, skipped=skipped)


def read_item(source, item: Item, link) -> Content | Unchanged:
    folder = _folder(source)
    path = folder / item.key
    try:
        stat = path.lstat()
    except FileNotFoundError:
        raise ItemGone(item.key) from None
    except OSError as exc:
        raise ItemFailed(f"cannot read the file: {exc.strerror or exc}") from None
    reason = outside_reason(stat, folder_device=os.stat(folder).st_dev)
    if reason:  # checked before the "unchanged" shortcut too
        raise ItemFailed(reason)
    validators = {"mtime_ns": stat.st_mtime_ns, "size": stat.st_size}
    if link is not None and (link.mtime_ns, link.size) == (stat.st_mtime_ns, stat.st_size):
        return Unchanged(validators)
    try:
        data = read_file(FolderFile(path, item.key, stat.st_mtime_ns, stat.st_size), folder=folder)
    except FileNotFoundError:
        raise ItemGone(item.key) from None
    except OSError as exc:  # ELOOP: it became a link since the listing
        raise ItemFailed(f"cannot read the file: {exc.strerror or exc}") from None
    return Content(data, path.name, validators)
