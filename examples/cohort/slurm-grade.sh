#!/usr/bin/env bash
# Grade a whole cohort on a Slurm cluster: a job array of shards, then a merge job.
#
#   SUBMISSIONS=/scratch/course/submissions OUT=/scratch/course/gradebook SHARDS=8 \
#     bash examples/cohort/slurm-grade.sh            # from the kit's folder (with .venv)
#
# Run without arguments on a login node, it submits
#   1. a job array of SHARDS tasks: task i runs `grade batch --shard i/SHARDS` into
#      $OUT/shard-i (this same script, with the argument `shard`);
#   2. a job that starts when every task succeeded (--dependency=afterok): `grade merge`
#      into $OUT/all, then `grade report` over all students (this script with `merge`).
# $OUT must be on a file system every node sees. sbatch passes the environment on
# (--export=ALL), so SUBMISSIONS, OUT, SHARDS and GRADE_OPTS reach the tasks.
# A task that died can be rerun alone (sbatch --array=3 … shard): `grade batch` resumes,
# grading only the students its folder does not hold yet. The nodes need bubblewrap (the
# official tier isolates each student with it) and user namespaces allowed for the user.
#
# Variables: SUBMISSIONS (required), OUT (default ./gradebook), SHARDS (default 4),
# GRADE (default ./.venv/bin/grade), GRADE_OPTS (more `grade batch` options, e.g. "--only ch05").
#
#SBATCH --job-name=grade-shard
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
#SBATCH --time=02:00:00
#SBATCH --output=grade-%A_%a.log
set -euo pipefail

KIT="${KIT:-${SLURM_SUBMIT_DIR:-$PWD}}"
GRADE="${GRADE:-$KIT/.venv/bin/grade}"
OUT="${OUT:-$KIT/gradebook}"
SHARDS="${SHARDS:-4}"
: "${SUBMISSIONS:?set SUBMISSIONS to the folder that holds one folder per student}"
read -r -a OPTS <<< "${GRADE_OPTS:-}"

case "${1:-submit}" in
  submit)
    array=$(sbatch --parsable --array="1-$SHARDS" "$0" shard)
    sbatch --parsable --job-name=grade-merge --dependency="afterok:${array%%;*}" \
      --cpus-per-task=1 --output=grade-merge-%j.log "$0" merge
    echo "submitted: shards $array (1-$SHARDS), then the merge"
    ;;
  shard)
    # task ids are 1..SHARDS (--array=1-SHARDS), as --shard counts; SHARDS, not the array's
    # size, so that a single task rerun alone (--array=3) still grades shard 3 of SHARDS
    index="$SLURM_ARRAY_TASK_ID"
    "$GRADE" batch "$SUBMISSIONS" --out "$OUT/shard-$index" --shard "$index/$SHARDS" \
      -j "${SLURM_CPUS_PER_TASK:-1}" --no-progress "${OPTS[@]}"
    ;;
  merge)
    "$GRADE" merge "$OUT"/shard-* --out "$OUT/all"
    "$GRADE" report "$OUT/all" --submissions "$SUBMISSIONS"
    ;;
  *)
    echo "usage: $0 [submit|shard|merge]" >&2
    exit 2
    ;;
esac
