#!/usr/bin/env bash
# Imports an LDBC SNB data set from shared/datasets with `rhizome import`.
#
#   scripts/import-ldbc.sh <sf0.1|tiny> <DB_DIR> [extra rhizome import flags...]
#
# Environment:
#   RHIZOME           the rhizome binary (default: target/release/rhizome;
#                     build it with `cargo build --release -p rhizome`)
#   RHIZOME_DATASETS  the datasets directory (default: ../shared/datasets
#                     beside this repository)
#
# Extra flags are passed on, e.g. `--overwrite-destination` or `--threads=2`.
#
# The canonical definition of these imports is the Rust function
# `rhizome_import::ldbc_options` (crates/rhizome-import/src/ldbc.rs); the
# flag lists below spell out the same options, and the test
# `script_matches_ldbc_options` in crates/rhizome-import/tests/script.rs fails
# if they drift apart. Labels, types and property keys use the names of LDBC's
# reference implementation (Message:Comment, HAS_CREATOR, HAS_MEMBER's
# creationDate, ...); see docs/import.md.
set -euo pipefail

usage() {
    echo "usage: $0 <sf0.1|tiny> <DB_DIR> [rhizome import flags...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
KIND=$1
DB=$2
shift 2

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
DATASETS=${RHIZOME_DATASETS:-$REPO/../shared/datasets}
RHIZOME=${RHIZOME:-target/release/rhizome}

case "$KIND" in
sf0.1)
    D="$DATASETS/ldbc-sf0.1"
    ARGS=(
        "--nodes=Person=$D/Person.csv"
        "--nodes=Message:Comment=$D/Comment.csv"
        "--nodes=Message:Post=$D/Post.csv"
        "--nodes=Forum=$D/Forum.csv"
        "--nodes=Tag=$D/Tag.csv"
        "--nodes=TagClass=$D/TagClass.csv"
        "--nodes=Place=$D/Place.csv"
        "--nodes=Organisation=$D/Organisation.csv"
        "--relationships=HAS_CREATOR=$D/Comment_hasCreator_Person.csv,$D/Comment_hasCreator_Person_1.csv"
        "--relationships=HAS_TAG=$D/Comment_hasTag_Tag.csv,$D/Comment_hasTag_Tag_1.csv"
        "--relationships=IS_LOCATED_IN=$D/Comment_isLocatedIn_Place.csv,$D/Comment_isLocatedIn_Place_1.csv"
        "--relationships=REPLY_OF=$D/Comment_replyOf_Comment.csv"
        "--relationships=REPLY_OF=$D/Comment_replyOf_Post.csv"
        "--relationships=CONTAINER_OF=$D/Forum_containerOf_Post.csv"
        "--relationships=HAS_MODERATOR=$D/Forum_hasModerator_Person.csv"
        "--relationships=HAS_TAG=$D/Forum_hasTag_Tag.csv"
        "--relationships=IS_LOCATED_IN=$D/Organisation_isLocatedIn_Place.csv"
        "--relationships=HAS_INTEREST=$D/Person_hasInterest_Tag.csv"
        "--relationships=IS_LOCATED_IN=$D/Person_isLocatedIn_Place.csv"
        "--relationships=KNOWS=$D/Person_knows_Person.csv,$D/Person_knows_Person_1.csv"
        "--relationships=LIKES=$D/Person_likes_Comment.csv,$D/Person_likes_Comment_1.csv"
        "--relationships=LIKES=$D/Person_likes_Post.csv,$D/Person_likes_Post_1.csv"
        "--relationships=STUDY_AT=$D/Person_studyAt_Organisation.csv"
        "--relationships=WORK_AT=$D/Person_workAt_Organisation.csv"
        "--relationships=IS_PART_OF=$D/Place_isPartOf_Place.csv"
        "--relationships=HAS_CREATOR=$D/Post_hasCreator_Person.csv"
        "--relationships=HAS_TAG=$D/Post_hasTag_Tag.csv"
        "--relationships=IS_LOCATED_IN=$D/Post_isLocatedIn_Place.csv"
        "--relationships=HAS_TYPE=$D/Tag_hasType_TagClass.csv"
        "--relationships=IS_SUBCLASS_OF=$D/TagClass_isSubclassOf_TagClass.csv"
        "--delimiter=|"
        "--id-type=integer"
        "--ignore-empty-strings"
    )
    # Absent from this copy of SF0.1 (see its SOURCE.md); used when present.
    if [ -f "$D/Forum_hasMember_Person.csv" ]; then
        ARGS+=("--relationships=HAS_MEMBER=$D/Forum_hasMember_Person.csv")
    fi
    ;;
tiny)
    D="$DATASETS/ldbc-tiny"
    ARGS=(
        "--nodes=Person=$D/dynamic/person_0_0.csv"
        "--nodes=Message:Comment=$D/dynamic/comment_0_0.csv"
        "--nodes=Message:Post=$D/dynamic/post_0_0.csv"
        "--nodes=Forum=$D/dynamic/forum_0_0.csv"
        "--nodes=Tag=$D/static/tag_0_0.csv"
        "--nodes=TagClass=$D/static/tagclass_0_0.csv"
        "--nodes=Place=$D/static/place_0_0.csv"
        "--nodes=Organisation=$D/static/organisation_0_0.csv"
        "--relationships=HAS_CREATOR=$D/dynamic/comment_hasCreator_person_0_0.csv"
        "--relationships=HAS_TAG=$D/dynamic/comment_hasTag_tag_0_0.csv"
        "--relationships=IS_LOCATED_IN=$D/dynamic/comment_isLocatedIn_place_0_0.csv"
        "--relationships=REPLY_OF=$D/dynamic/comment_replyOf_comment_0_0.csv"
        "--relationships=REPLY_OF=$D/dynamic/comment_replyOf_post_0_0.csv"
        "--relationships=CONTAINER_OF=$D/dynamic/forum_containerOf_post_0_0.csv"
        "--relationships=HAS_MEMBER=$D/dynamic/forum_hasMember_person_0_0.csv"
        "--relationships=HAS_MODERATOR=$D/dynamic/forum_hasModerator_person_0_0.csv"
        "--relationships=HAS_TAG=$D/dynamic/forum_hasTag_tag_0_0.csv"
        "--relationships=IS_LOCATED_IN=$D/static/organisation_isLocatedIn_place_0_0.csv"
        "--relationships=HAS_INTEREST=$D/dynamic/person_hasInterest_tag_0_0.csv"
        "--relationships=IS_LOCATED_IN=$D/dynamic/person_isLocatedIn_place_0_0.csv"
        "--relationships=KNOWS=$D/dynamic/person_knows_person_0_0.csv"
        "--relationships=LIKES=$D/dynamic/person_likes_comment_0_0.csv"
        "--relationships=LIKES=$D/dynamic/person_likes_post_0_0.csv"
        "--relationships=STUDY_AT=$D/dynamic/person_studyAt_organisation_0_0.csv"
        "--relationships=WORK_AT=$D/dynamic/person_workAt_organisation_0_0.csv"
        "--relationships=IS_PART_OF=$D/static/place_isPartOf_place_0_0.csv"
        "--relationships=HAS_CREATOR=$D/dynamic/post_hasCreator_person_0_0.csv"
        "--relationships=HAS_TAG=$D/dynamic/post_hasTag_tag_0_0.csv"
        "--relationships=IS_LOCATED_IN=$D/dynamic/post_isLocatedIn_place_0_0.csv"
        "--relationships=HAS_TYPE=$D/static/tag_hasType_tagclass_0_0.csv"
        "--relationships=IS_SUBCLASS_OF=$D/static/tagclass_isSubclassOf_tagclass_0_0.csv"
        "--delimiter=|"
        "--id-type=integer"
        "--ignore-empty-strings"
    )
    ;;
*)
    usage
    ;;
esac

[ -d "$D" ] || { echo "$0: data set directory $D not found (set RHIZOME_DATASETS)" >&2; exit 1; }
[ -x "$RHIZOME" ] || command -v "$RHIZOME" >/dev/null 2>&1 || {
    echo "$0: $RHIZOME not found (build it with cargo build --release -p rhizome, or set RHIZOME)" >&2
    exit 1
}
"$RHIZOME" import "$DB" "${ARGS[@]}" "$@"
# Property names of the reference implementation where the CSV headers differ
# (rhizome_import::REFERENCE_PROPERTY_RENAMES; the test checks they agree).
"$RHIZOME" query "$DB" --format csv \
    'MATCH ()-[m:HAS_MEMBER]->() SET m.creationDate = m.joinDate REMOVE m.joinDate' >/dev/null
