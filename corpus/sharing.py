"""Who may use a collection, with the recipients' consent.

An owner (or a superuser) shares a collection with people and groups (collection_share). Sharing
with a person who is not yet a reader or an editor does not give them anything: it makes a
ShareInvitation that they accept or decline (listed on their documents page and at
/api/invitations/, with the sharer's name). Until they accept, nothing of the collection reaches
their searches, answers or lists, so a collection cannot be pushed into someone's "all
collections" answers. A person already reading or editing it changes role at once.

A group can be added only by one of its members (or a superuser): sharing with a group one is
not in would push the collection into strangers' answers the same way. Groups already shared stay
shared, and anyone who manages the collection may take them off.

Invitations are bounded (a flood of them would bury a person's page, and each is a row): a sharer
has at most MAX_PENDING_BY_SHARER unanswered invitations in all, and at most
MAX_PENDING_PER_PERSON waiting for any one person (ValidationError naming the field; nothing changes).
A "no" is remembered (ShareDecline): the sharer whose invitation was declined may not invite that
person to that collection again for DECLINE_COOL_OFF. Superusers are not held to any of these (a
person who changes their mind meanwhile asks one, or the sharer invites them after the cool-off).

Sharing must not list the accounts: whether the names typed are people (groups) one may share with
is answered by share_targets with one message naming none of them, at most MAX_NEW_NAMES names not
on the collection yet per change, and such changes draw on an hourly budget per user (ShareQuota).

Every change is audited: "sharing changed" (with who was invited and whose invitation was
withdrawn), "share invitation accepted" and "declined" by the recipient.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from accounts.quotas import wait_seconds
from audit import record as audit_record
from audit.models import Action
from corpus import permissions, selectors
from corpus.models import Collection, ShareDecline, ShareInvitation
from corpus.quotas import ShareQuota

Role = ShareInvitation.Role
GROUP_FIELDS = ("reader_groups", "editor_groups")
# Unanswered invitations one sharer may have: in all, and waiting for one person. A team shares with
# tens of people; a hundred open offers is a mailing list, and ten to one person is pestering.
MAX_PENDING_BY_SHARER = 100
MAX_PENDING_PER_PERSON = 10
# How long a declined invitation keeps its sharer from inviting that person to that collection again:
# asking again at once, and again, is pestering; after a month, needs may well have changed.
DECLINE_COOL_OFF = timedelta(days=30)
# Names of people and groups not on the collection yet that one change may carry: a team is shared with
# a few at a time (or through a group); more would let one request try a list of likely accounts.
MAX_NEW_NAMES = 20
SHARE_FIELDS = {"readers": selectors.users_by_username, "editors": selectors.users_by_username,
                "reader_groups": selectors.groups_by_name, "editor_groups": selectors.groups_by_name}


class ShareThrottled(ValidationError):
    """Too many shares naming someone new lately (ShareQuota); `wait`: seconds until the next."""

    def __init__(self, wait: int):
        super().__init__(f"You shared with new people or groups many times lately; try again in {wait} seconds.",
                         code="throttled")
        self.wait = wait


def share_targets(*, collection: Collection | None, request, names: dict[str, list[str] | None]) -> dict:
    """collection_share's arguments from the names typed: `names` maps SHARE_FIELDS (usernames for
    readers and editors, group names for the groups) to the names given (None: the field is left as it
    is). Names already on `collection` (None: a new one) as members, invited people or groups cost
    nothing. Else, in this order: ValidationError if they carry more than MAX_NEW_NAMES new names;
    ShareThrottled if the request's user (superusers aside) is past ShareQuota (this call is
    counted); ValidationError per field, naming none of the names, if one is no active user, no
    group, or a new group the user may not share with (check_groups)."""
    given = {field: selectors.names_given(members) for field, members in names.items() if members is not None}
    known = _names_on(collection)
    new = [name for field, members in given.items() for name in members if name not in known[field]]
    if len(new) > MAX_NEW_NAMES:
        first = next(field for field, members in given.items() if set(members) - known[field])
        raise ValidationError({first: f"At most {MAX_NEW_NAMES} new people or groups in one change: share in "
                                      "steps, or with a group."}, code="too_many_names")
    user = getattr(request, "user", None)
    if new and not (user is not None and user.is_superuser):
        wait = wait_seconds(ShareQuota, request)
        if wait is not None:
            raise ShareThrottled(wait)
    targets: dict[str, list | None] = {field: None for field in names}
    errors = {}
    for field, members in given.items():
        try:
            targets[field] = SHARE_FIELDS[field](members)
        except ValidationError as exc:
            errors[field] = exc.messages
    if errors:
        raise ValidationError(errors, code="not_shareable")
    check_groups(collection, _sharer(request, None), {field: targets.get(field) for field in GROUP_FIELDS})
    return targets


def _names_on(collection: Collection | None) -> dict[str, set[str]]:
    """Per share field, the names a share may repeat without asking anything new: the people on
    `collection` or invited to it, and its groups."""
    if collection is None or collection.pk is None:
        return {field: set() for field in SHARE_FIELDS}
    people = (set(collection.readers.values_list("username", flat=True))
              | set(collection.editors.values_list("username", flat=True))
              | set(collection.invitations.values_list("user__username", flat=True)))
    groups = (set(collection.reader_groups.values_list("name", flat=True))
              | set(collection.editor_groups.values_list("name", flat=True)))
    return {"readers": people, "editors": people, "reader_groups": groups, "editor_groups": groups}


def _sharer(request, sharer):
    user = sharer if sharer is not None else getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def collection_share(*, collection: Collection, readers: Iterable | None = None, editors: Iterable | None = None,
                     reader_groups: Iterable | None = None, editor_groups: Iterable | None = None,
                     request=None, sharer=None) -> Collection:
    """Replace who may read (`readers`, users; `reader_groups`, auth groups) and who may also write
    (`editors`, `editor_groups`) the collection's documents; None leaves that set as it is.

    The sharer is `sharer`, else the request's user. A person who is neither a reader nor an editor
    yet (nor the sharer) gets an invitation for that role instead (or has theirs changed to it);
    an invitation of someone no longer listed is withdrawn. Without a sharer (trusted code: a
    command, a migration) people are added at once. A group that is in neither group set yet must
    be one of the sharer's (superusers: any): else ValidationError naming the field, and nothing
    changes. A change is audited ("sharing changed", with the sets as they now are)."""
    actor = _sharer(request, sharer)
    with transaction.atomic():
        Collection.objects.select_for_update().filter(pk=collection.pk).first()  # one change at a time
        check_groups(collection, actor, {"reader_groups": reader_groups, "editor_groups": editor_groups})
        changed = {}
        for field, members in (("reader_groups", reader_groups), ("editor_groups", editor_groups)):
            if members is None:
                continue
            members, before = list(members), set(getattr(collection, field).values_list("pk", flat=True))
            if {member.pk for member in members} != before:
                getattr(collection, field).set(members)
                changed[field] = sorted(str(member) for member in members)
        if readers is not None or editors is not None:
            changed |= _share_people(collection, actor, readers, editors)
        if changed:
            audit_record(Action.SHARING_CHANGED, target=collection, detail=changed, request=request, actor=sharer)
    return collection


def check_groups(collection: Collection | None, actor, groups: dict[str, Iterable | None]) -> None:
    """ValidationError on the field (selectors.NOT_SHAREABLE_GROUPS: the message of an unknown group,
    naming none) when `groups` (field -> groups, None: unchanged) add a group to `collection` (None:
    a new one) that `actor` may not share with (permissions.can_share_with_group). Groups already
    shared stay allowed. share_targets and collection_share call it."""
    if actor is None:
        return
    shared = set() if collection is None or collection.pk is None else (
        set(collection.reader_groups.values_list("pk", flat=True))
        | set(collection.editor_groups.values_list("pk", flat=True)))
    errors = {}
    for field, members in groups.items():
        if members is None:
            continue
        if any(group.pk not in shared and not permissions.can_share_with_group(actor, group) for group in members):
            errors[field] = selectors.NOT_SHAREABLE_GROUPS  # as for a name that is no group
    if errors:
        raise ValidationError(errors, code="not_shareable")


def _share_people(collection: Collection, actor, readers: Iterable | None, editors: Iterable | None) -> dict:
    """collection_share for people: members change role or go at once, others are invited. Returns
    what changed, for the audit."""
    current = {"read": set(collection.readers.values_list("pk", flat=True)),
               "write": set(collection.editors.values_list("pk", flat=True))}
    pending = {invitation.user_id: invitation for invitation in collection.invitations.all()}
    wanted: dict[int, str] = {}
    names = {}
    for role, people in (("read", readers), ("write", editors)):  # someone listed as both: write
        if people is None:  # as they are, invitations included
            wanted |= {pk: role for pk in current[role]}
            wanted |= {pk: role for pk, invitation in pending.items() if invitation.role == role}
        else:
            for person in people:
                wanted[person.pk] = role
                names[person.pk] = person.get_username()
    members = current["read"] | current["write"]
    direct = {"read": set(), "write": set()}
    invite: dict[int, str] = {}
    for pk, role in wanted.items():
        if pk in members or actor is None or pk == actor.pk:
            direct[role].add(pk)
        else:
            invite[pk] = role
    unnamed = (members | set(pending) | set(wanted)) - set(names)
    names |= dict(get_user_model().objects.filter(pk__in=unnamed).values_list("pk", "username"))

    changed = {}
    for role, field in (("read", "readers"), ("write", "editors")):
        if direct[role] != current[role]:
            getattr(collection, field).set(direct[role])
            changed[field] = sorted(names[pk] for pk in direct[role])
    withdrawn = [pk for pk in pending if pk not in invite]
    ShareInvitation.objects.filter(collection=collection, user_id__in=withdrawn).delete()
    _check_may_invite(actor, collection, [pk for pk in invite if pk not in pending], names, invite)
    invited = []
    for pk, role in invite.items():
        invitation = pending.get(pk)
        if invitation is None:
            ShareInvitation.objects.create(collection=collection, user_id=pk, role=role, invited_by=actor)
        elif invitation.role != role:
            ShareInvitation.objects.filter(pk=invitation.pk).update(role=role)
        else:
            continue
        invited.append(f"{names[pk]} ({role})")
    if invited:
        changed["invited"] = sorted(invited)
    if withdrawn:
        changed["withdrawn"] = sorted(names[pk] for pk in withdrawn)
    return changed


def _check_may_invite(actor, collection: Collection, new: list[int], names: dict[int, str],
                           roles: dict[int, str]) -> None:
    """ValidationError (on the field of the role) when `actor` may not invite the people `new` to
    `collection`: one of them declined their invitation to it within DECLINE_COOL_OFF, or it would
    take them past MAX_PENDING_BY_SHARER or MAX_PENDING_PER_PERSON. The sharer's row is locked
    first, so two shares at once count each other's invitations."""
    if not new or actor is None or actor.is_superuser:
        return

    def field_of(pk: int) -> str:
        return "editors" if roles[pk] == Role.WRITE else "readers"

    declined = set(ShareDecline.objects.filter(collection=collection, invited_by=actor, user_id__in=new,
                                               declined_at__gt=timezone.now() - DECLINE_COOL_OFF)
                   .values_list("user_id", flat=True))
    if declined:
        # Tells the sharer only what they know already: their invitation went unaccepted.
        first = next(pk for pk in new if pk in declined)
        raise ValidationError({field_of(first): f"{', '.join(sorted(names[pk] for pk in declined))} declined your "
                                                f"invitation to this collection within the last "
                                                f"{DECLINE_COOL_OFF.days} days: you may not invite them to it "
                                                "again yet."}, code="declined")
    get_user_model().objects.select_for_update().filter(pk=actor.pk).first()
    theirs = ShareInvitation.objects.filter(invited_by=actor)
    if theirs.count() + len(new) > MAX_PENDING_BY_SHARER:
        raise ValidationError({field_of(new[0]): f"You have {MAX_PENDING_BY_SHARER} invitations at most waiting for "
                                                 "an answer; withdraw some, or wait until they are answered."},
                              code="too_many_invitations")
    per_person = dict(theirs.filter(user_id__in=new).values_list("user_id").annotate(n=Count("pk")))
    pestered = sorted(names[pk] for pk in new if per_person.get(pk, 0) + 1 > MAX_PENDING_PER_PERSON)
    if pestered:
        first = next(pk for pk in new if names[pk] == pestered[0])
        raise ValidationError({field_of(first): f"{', '.join(pestered)} already has {MAX_PENDING_PER_PERSON} of your "
                                                "invitations to answer."}, code="too_many_invitations")


def invitations_pending(*, user) -> QuerySet[ShareInvitation]:
    """`user`'s invitations waiting for an answer, newest first, with collection and sharer."""
    return ShareInvitation.objects.filter(user=user).select_related("collection", "invited_by")


def invitation_accept(*, invitation: ShareInvitation, request=None) -> Collection:
    """Make the invited person a reader or an editor (the invitation's role) and drop the
    invitation. Audited ("share invitation accepted", by them). Denied (404) if it was withdrawn
    or answered meanwhile, or if its sender may no longer share the collection (the invitation is
    then dropped, audited as declined with "lapsed")."""
    return _answer(invitation, accept=True, request=request)


def invitation_decline(*, invitation: ShareInvitation, request=None) -> Collection:
    """Drop the invitation; nothing is shared. The "no" is remembered (ShareDecline): its sender may
    not invite them to the collection again for DECLINE_COOL_OFF. Audited ("share invitation
    declined", by them). Denied (404) if it was withdrawn or answered meanwhile."""
    return _answer(invitation, accept=False, request=request)


def _answer(invitation: ShareInvitation, *, accept: bool, request) -> Collection:
    with transaction.atomic():
        collection = Collection.objects.select_for_update().filter(pk=invitation.collection_id).first()
        locked = (ShareInvitation.objects.select_for_update(of=("self",)).select_related("user", "invited_by")
                  .filter(pk=invitation.pk).first())
        if collection is None or locked is None:
            raise permissions.Denied("This invitation was withdrawn or already answered.", status=404)
        sharer = locked.invited_by
        # An offer holds only while its sender may still share the collection (an owner who handed
        # it over, a superuser demoted, an account closed): accepting it drops it, audited as declined.
        lapsed = accept and (sharer is None or not sharer.is_active
                             or not permissions.can_manage_collection(sharer, collection))
        if accept and not lapsed:
            (collection.editors if locked.role == Role.WRITE else collection.readers).add(locked.user)
            ShareDecline.objects.filter(collection=collection, user=locked.user).delete()  # they said yes since
        elif not accept and sharer is not None:
            ShareDecline.objects.update_or_create(collection=collection, user=locked.user, invited_by=sharer,
                                                  defaults={"declined_at": timezone.now()})
        detail = {"role": locked.role, "invited_by": sharer.get_username() if sharer else None}
        audit_record(Action.SHARE_ACCEPTED if accept and not lapsed else Action.SHARE_DECLINED, target=collection,
                     actor=locked.user, request=request, detail=detail | ({"lapsed": True} if lapsed else {}))
        locked.delete()
    if lapsed:
        raise permissions.Denied("This invitation no longer holds: the person who sent it can no longer share "
                                 "this collection.", status=404)
    return collection


def shares_with_invitations(collection: Collection) -> dict[str, list]:
    """The people a sharing form starts from: readers and editors, each with the people invited to
    that role (so saving the form keeps their invitations), and the groups."""
    invitations = list(collection.invitations.select_related("user"))
    return {
        "readers": [*collection.readers.all(), *(i.user for i in invitations if i.role == Role.READ)],
        "editors": [*collection.editors.all(), *(i.user for i in invitations if i.role == Role.WRITE)],
        "reader_groups": list(collection.reader_groups.all()),
        "editor_groups": list(collection.editor_groups.all()),
    }
