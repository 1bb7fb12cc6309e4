#!/bin/sh
# Regenerates the lstopo XML files of this folder with hwloc's own tools
# (lstopo exports, hwloc-annotate adds the SLIT and subtypes). Each file is
# the shape of a real machine family; the shapes and distance matrices follow
# what lstopo and numactl --hardware print on those machines. Run it from
# anywhere; it writes beside itself. hwloc 2.x.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1 file, $2 synthetic description, $3 comment, $4 optional SLIT (rows of
# numbers, logical NUMA order), $5.. optional "object subtype" annotations.
make_one() {
  file=$1 desc=$2 comment=$3 slit=${4:-}
  shift 4 || shift $#
  rm -f "$tmp/a.xml"
  lstopo --input "$desc" --of xml "$tmp/a.xml"
  if [ -n "$slit" ]; then
    n=$(echo "$slit" | wc -l)
    {
      echo 5  # HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY, as Linux reports a SLIT
      echo "$n"
      i=0
      while [ "$i" -lt "$n" ]; do echo "NUMANode:$i"; i=$((i + 1)); done
      echo "$slit" | tr -s ' ' '\n' | grep -v '^$'
    } > "$tmp/slit.txt"
    hwloc-annotate "$tmp/a.xml" "$tmp/a.xml" root distances "$tmp/slit.txt"
  fi
  while [ $# -ge 2 ]; do
    hwloc-annotate "$tmp/a.xml" "$tmp/a.xml" "$1" subtype "$2"
    shift 2
  done
  sed -e '/<info name="Backend" value="Synthetic"\/>/d' -e '/<info name="SyntheticDescription"/d' \
      -e "2a<!-- $comment -->" "$tmp/a.xml" > "$here/$file"
}

# Intel Xeon 7400 (Dunnington), 4 sockets on one front-side bus and one
# memory controller hub: a single NUMA node at the machine root spans all
# four packages. No SMT; L2 shared by core pairs, L3 per package.
make_one xeon7400-4s-uma.xml "[numa(memory=64GiB)] pack:4 l3:1(size=16MiB) l2:3(size=3MiB) core:2 pu:1" \
  "4-socket Intel Xeon 7400 class: one NUMA node at the root spans 4 packages x 6 cores, no SMT" ""

# AMD Opteron 6100 (Magny-Cours), 4 sockets: two dies per package, each its
# own NUMA node with an L3; HyperTransport hops give 16 (one) or 22 (two).
make_one opteron6100-4s-8n.xml "pack:4 numa:2(memory=16GiB) l3:1(size=6MiB) core:6 pu:1" \
  "4-socket AMD Opteron 6100 class: 2 NUMA nodes per package, 6 cores per node, SLIT 10/16/22" \
"10 16 16 22 16 22 16 22
16 10 22 16 22 16 22 16
16 22 10 16 16 22 16 22
22 16 16 10 22 16 22 16
16 22 16 22 10 16 16 22
22 16 22 16 16 10 22 16
16 22 16 22 16 22 10 16
22 16 22 16 22 16 16 10"

# AMD EPYC 7002 (Rome) 64-core, 2 sockets in NPS4: four NUMA nodes per
# package, an L3 per 4-core CCX, SMT siblings numbered +128 as Linux does.
make_one epyc7002-2s-nps4.xml \
  "pack:2 numa:4(memory=64GiB) l3:4(size=16MiB) core:4 pu:2(indexes=2*128:1*2)" \
  "2-socket AMD EPYC 7002 class in NPS4: 4 NUMA nodes per package, L3 per 4-core CCX, SMT2 siblings at +128, SLIT 10/12/32" \
"10 12 12 12 32 32 32 32
12 10 12 12 32 32 32 32
12 12 10 12 32 32 32 32
12 12 12 10 32 32 32 32
32 32 32 32 10 12 12 12
32 32 32 32 12 10 12 12
32 32 32 32 12 12 10 12
32 32 32 32 12 12 12 10"

# Intel Xeon Phi 7210 (Knights Landing) in SNC-4 flat mode: four quadrants,
# each with a DDR node that has the CPUs and an MCDRAM node of memory only
# (hwloc attaches both to the quadrant); tiles of 2 cores share an L2; SMT4
# siblings numbered +64; no L3.
make_one knl7210-snc4-flat.xml \
  "pack:1 group:4 [numa(memory=24GiB)] [numa(memory=4GiB)] l2:8(size=1MiB) core:2 pu:4(indexes=4*64:1*4)" \
  "Intel Xeon Phi 7210 class, SNC-4 flat: per quadrant one DDR node with 16 cores and one MCDRAM node, no L3, SMT4" \
"10 31 21 41 21 41 21 41
31 10 41 41 41 41 41 41
21 41 10 31 21 41 21 41
41 41 31 10 41 41 41 41
21 41 21 41 10 31 21 41
41 41 41 41 31 10 41 41
21 41 21 41 21 41 10 31
41 41 41 41 41 41 31 10" \
  NUMANode:1 MCDRAM NUMANode:3 MCDRAM NUMANode:5 MCDRAM NUMANode:7 MCDRAM

# IBM POWER9, 2 sockets: SMT4 cores numbered consecutively, an L3 per core
# pair, one NUMA node per package, SLIT 10/40.
make_one power9-2s-smt4.xml "pack:2 [numa(memory=128GiB)] l3:5(size=10MiB) core:2 pu:4" \
  "2-socket IBM POWER9 class: 10 SMT4 cores per package, L3 per core pair, SLIT 10/40" \
"10 40
40 10"

# An 8-socket Intel Xeon (glueless UPI: 21 one hop, 31 two) exported inside
# a cgroup whose cpuset.cpus and cpuset.mems allow packages 2 and 5 only.
make_one xeon-8s-cgroup-2of8.xml "pack:8 [numa(memory=96GiB)] l3:1(size=38MiB) core:4 pu:2" \
  "8-socket Intel Xeon class seen from a cgroup that allows packages 2 and 5 (PUs 16-23,40-47, NUMA nodes 2 and 5)" \
"10 21 21 31 21 31 31 31
21 10 31 21 31 21 31 31
21 31 10 21 31 31 21 31
31 21 21 10 31 31 31 21
21 31 31 31 10 21 21 31
31 21 31 31 21 10 31 21
31 31 21 31 21 31 10 21
31 31 31 21 31 21 21 10"
# The allowed sets of the root (Machine) object, as lstopo writes them
# under such a cgroup.
sed -i -e '0,/allowed_cpuset="[^"]*"/s//allowed_cpuset="0x0000ff00,0x00ff0000"/' \
       -e '0,/allowed_nodeset="[^"]*"/s//allowed_nodeset="0x00000024"/' "$here/xeon-8s-cgroup-2of8.xml"
