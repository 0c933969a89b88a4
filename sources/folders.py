"""Server folders a source may read: only under the operator's SOURCES_FOLDERS, never a free path.

A folder is resolved (symbolic links and ".." followed) before it is checked, so a link inside an
allowed root that points outside it is refused like the outside path itself. Inside the folder,
links are never followed (like `manage.py ingest`): a link could make a secret elsewhere on the
server a document. Nor is a file with more than one hard link (its other name may be anywhere on
the same file system: a hard link to a secret is no symbolic link) or a file on another device
than the folder's (a mount inside the tree): a file read has one name, and that name is in the
folder. Only the types the parser registry reads are listed, hidden files skipped.

Messages never show server paths beyond the one given (not the allowed roots, nor where a link
leads): people who are not staff read them on the Sources page. The log has the details.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.conf import settings

from corpus.ingest.parse.formats import SUPPORTED_EXTENSIONS

logger = logging.getLogger(__name__)

MAX_FOLDER_CHOICES = 200  # folders offered in the web form
MAX_FOLDER_DEPTH = 64  # sub-folder levels a folder source reads; deeper ones are skipped


class FolderRefused(ValueError):
    """The path may not be a source; str(exc) says why, for the person who typed it."""


def allowed_roots() -> list[Path]:
    """The resolved SOURCES_FOLDERS that exist (empty: server folders are off)."""
    roots = []
    for root in settings.SOURCES_FOLDERS:
        resolved = Path(root).expanduser().resolve()
        if resolved.is_dir():
            roots.append(resolved)
    return roots


def root_of(folder: Path) -> Path | None:
    """The allowed root holding the resolved `folder`, or None."""
    for root in allowed_roots():
        if folder == root or folder.is_relative_to(root):
            return root
    return None


def resolve_folder(path: str) -> Path:
    """The resolved folder for `path`: an absolute path, or one relative to the first allowed root
    that has it. Raises FolderRefused unless it is an existing folder inside an allowed root."""
    roots = allowed_roots()
    if not roots:
        raise FolderRefused("Server folders are not enabled: the operator lists the allowed ones in SOURCES_FOLDERS.")
    path = (path or "").strip()
    if not path or "\x00" in path:
        raise FolderRefused("Give the folder's path.")
    given = Path(path).expanduser()
    candidates = [given] if given.is_absolute() else [root / given for root in roots]
    for candidate in candidates:
        try:
            resolved = candidate.resolve()
            inside = root_of(resolved) is not None
            is_dir = inside and resolved.is_dir()
        except OSError as exc:  # a name too long, a link loop, a folder on the way one may not enter
            raise FolderRefused(f"{path[:200]}: cannot be read ({exc.strerror or exc}).") from None
        if not inside:
            continue
        if not is_dir:
            raise FolderRefused(f"{path[:200]}: no such folder.")
        return resolved
    logger.info("folder %r refused: not under SOURCES_FOLDERS %s", path[:200], [str(root) for root in roots])
    raise FolderRefused(f"{path[:200]}: not inside a folder the operator allows (SOURCES_FOLDERS).")


def folder_choices() -> list[str]:
    """The allowed roots and their sub-folders (two levels, hidden ones and links left out, at most
    MAX_FOLDER_CHOICES): what the web form offers instead of a free path."""
    found: list[str] = []
    for root in allowed_roots():
        found.append(str(root))
        for directory, folders, _ in os.walk(root):
            depth = len(Path(directory).relative_to(root).parts)
            folders[:] = sorted(f for f in folders if not f.startswith(".")
                                and not (Path(directory) / f).is_symlink()) if depth < 2 else []
            found.extend(str(Path(directory) / f) for f in folders)
            if len(found) >= MAX_FOLDER_CHOICES:
                return found[:MAX_FOLDER_CHOICES]
    return found


@dataclass(frozen=True)
class FolderFile:
    """A file of the folder: `key` its path relative to the folder (POSIX), with what tells a change."""

    path: Path
    key: str
    mtime_ns: int
    size: int


# Why an entry of a folder source is not read, for the Sources page.
LINKED_FILE = "skipped: a symbolic link (links are not followed; add the folder it leads to as a source)"
LINKED_FOLDER = "skipped: a link to a folder (links are not followed; add that folder as a source)"
UNREADABLE = "skipped: the file cannot be read by the server (check its permissions)"


def folder_files(folder: Path, *, limit: int,
                 skipped: list[tuple[str, str]] | None = None) -> tuple[list[FolderFile], bool]:
    """The supported files under `folder` (recursive, in sorted walk order, links and hidden entries
    skipped, sub-folders at most MAX_FOLDER_DEPTH deep), at most `limit`; and whether there were
    more. The walk stops there: a huge tree costs no more than `limit` files. `skipped`, when
    given, gets (path in the folder, reason) of each link (to a file of a supported type, or to a
    folder) and unreadable file passed over, for the person who set the source up."""
    files: list[FolderFile] = []
    skipped = [] if skipped is None else skipped
    for directory, folders, names in os.walk(folder):  # followlinks=False
        if len(files) > limit:
            break
        base = Path(directory)
        # Python 3.11's os.walk recurses: a tree ~1,000 levels deep would end the sync in RecursionError.
        deep = len(base.relative_to(folder).parts) >= MAX_FOLDER_DEPTH
        folders[:] = [] if deep else sorted(f for f in folders if not f.startswith("."))
        for name in folders:
            if (base / name).is_symlink():  # os.walk lists it and does not descend (followlinks=False)
                skipped.append(((base / name).relative_to(folder).as_posix(), LINKED_FOLDER))
        for name in sorted(names):
            file = base / name
            if name.startswith(".") or Path(name).suffix.lower() not in SUPPORTED_EXTENSIONS:
                continue
            try:
                info = file.lstat()
            except OSError:
                continue  # gone since the listing
            if file.is_symlink():
                skipped.append((file.relative_to(folder).as_posix(), LINKED_FILE))
                continue
            if not file.is_file():
                continue
            if not os.access(file, os.R_OK):
                skipped.append((file.relative_to(folder).as_posix(), UNREADABLE))
                continue
            files.append(FolderFile(file, file.relative_to(folder).as_posix(), info.st_mtime_ns, info.st_size))
    return files[:limit], len(files) > limit


def outside_reason(info: os.stat_result, *, folder_device: int) -> str | None:
    """Why a file with this stat may not be read as part of a folder on `folder_device`, or None."""
    if info.st_nlink > 1:
        return "the file has more than one hard link (another name of it may lie outside the folder)"
    if info.st_dev != folder_device:
        return "the file lies on another device than the source's folder"
    return None


def _open_below(folder: Path, key: str) -> int:
    """A descriptor of the file `key` (a path relative to `folder`) opened one component at a time,
    none of them followed if it is a link (ELOOP, or ENOTDIR for a folder on the way): a sub-folder
    swapped for a link after the check above cannot lead the open out of `folder`."""
    *folders_on_way, name = PurePosixPath(key).parts
    if PurePosixPath(key).is_absolute() or ".." in folders_on_way or name == "..":
        raise OSError(errno.EINVAL, "not a path inside the source's folder")
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in folders_on_way:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    finally:
        os.close(directory)


def read_file(file: FolderFile, *, folder: Path) -> bytes:
    """The bytes of `file` of `folder`, refusing (OSError) what changed since it was listed: the
    file become a link (O_NOFOLLOW), a folder on its way become a link leading out of `folder`,
    or the file replaced by something that is not a regular file (a FIFO would block the sync
    forever, a device would never end: O_NONBLOCK, then fstat); and refusing a file whose inode
    may lie outside the folder (outside_reason), checked on the opened file itself."""
    if not file.path.parent.resolve().is_relative_to(folder):
        raise OSError(errno.ELOOP, "a folder on its way is now a link out of the source's folder")
    descriptor = _open_below(folder, file.key)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        reason = outside_reason(info, folder_device=os.stat(folder).st_dev)
        if reason:
            raise OSError(errno.EPERM, reason)
        return handle.read(settings.MAX_UPLOAD_BYTES + 1)


FOLDER_PERMISSION = "sources.add_folder_source"


def may_add_folder(user) -> bool:
    """Whether `user` may add a server folder source: active staff, and whoever holds the permission
    "Can add server folder sources" (FOLDER_PERMISSION, given in the admin to them or to a group of
    theirs; superusers hold every permission); None: the operator, on the command line. A folder's
    files are the server's, not the user's. The one check: the Sources page, the REST API and the
    admin all ask it (the form offers folders by it, source_create refuses by it)."""
    if user is None:
        return True
    return user.is_active and (user.is_staff or user.has_perm(FOLDER_PERMISSION))


FOLDERS_FOR_STAFF = ("Only staff may add server folder sources, and those an administrator gives the permission "
                     "\"Can add server folder sources\".")
