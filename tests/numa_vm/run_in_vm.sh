#!/usr/bin/env bash
# run_in_vm.sh - run one test binary inside a NUMA Linux guest under QEMU.
#
# Usage:
#   tests/numa_vm/run_in_vm.sh [--cache DIR] [--timeout SECONDS] [--verbose]
#                              [--] BINARY [ARGS...]
#
# What it does:
#   1. Makes sure the host tools exist (qemu-system-x86_64, a busybox, cpio).
#      As root it installs the Debian packages qemu-system-x86, busybox-static
#      and cpio; otherwise it stops and names them.
#   2. Fetches a kernel once into the cache: linux-image-cloud-amd64 is a
#      metapackage, so `apt-cache depends` gives the versioned image package,
#      which is `apt-get download`ed and `dpkg -x`ed; boot/vmlinuz-* is kept
#      as DIR/kernel/vmlinuz.  Later runs reuse it without touching apt.
#   3. Builds an initramfs (cpio -H newc) in a scratch directory under the
#      cache (removed on exit): a busybox with its applet symlinks in /bin,
#      BINARY at its own absolute path, every library `ldd` lists for BINARY
#      (and for busybox) at the same absolute paths, including the dynamic
#      loader, /etc/ld.so.cache, and an /init that mounts proc, sysfs and
#      devtmpfs, runs BINARY with ARGS (each argument single-quoted, so spaces,
#      '*', ':' and quotes pass through unchanged), prints the sentinel line
#      STRATA_VM_EXIT=<status> and calls `poweroff -f`.
#   4. Boots it under QEMU TCG (never KVM: nested virtualisation hangs here):
#      8 CPUs as 2 sockets x 4 cores, 2 GiB as four 512 MiB NUMA nodes with
#      two CPUs each (node0: cpus 0-1, node1: 2-3, node2: 4-5, node3: 6-7).
#      Nodes 0,1 sit in package 0 and nodes 2,3 in package 1; the distance
#      table is 10 local, 12 within a package, 32 across packages.
#   5. Streams the test's output (the guest console after the /init start
#      marker, CRs stripped) to stdout and exits with the test's status.
#      If QEMU itself dies of a signal before the test starts (a rare TCG
#      crash), or the guest stalls while it boots (a soft lockup or an RCU
#      stall on the console, or no test started within --boot-timeout), it
#      boots again, at most three boots in all.
#
# Exit status: the test's own status (0-255; 128+N if it died of signal N),
# or 125 when there is no result: bad usage, missing tools, no kernel, the
# guest never printed the sentinel (kernel panic, timeout).  On that error
# the tail of the raw console log goes to stderr.
#
# Options:
#   --cache DIR      kernel and scratch space; default $STRATA_VM_CACHE, else
#                    ./numa_vm_cache under the current directory.
#   --timeout SECS   wall-clock limit for the whole guest run (default 300).
#   --boot-timeout SECS  limit for one boot, until the test starts (default
#                    180, at most half of --timeout; a boot takes about 10 s).
#   --verbose        stream the whole console (boot log included).
# Environment:
#   STRATA_VM_CACHE  default cache directory.
#   STRATA_VM_KEEP=1 keep the scratch directory (initramfs, console log).
#   GTEST_* and STRATA_* variables (other than STRATA_VM_*) are exported to
#   the test inside the guest.
#
# The guest sees the host's current directory (created empty) as its working
# directory; the test's stdin is /dev/null.  Only BINARY and its ldd-listed
# libraries are copied: data files and dlopen()ed plugins are not.

set -euo pipefail

readonly NO_RESULT=125
readonly SENTINEL=STRATA_VM_EXIT
readonly BEGIN_MARK=STRATA_VM_BEGIN_TEST
readonly KERNEL_META=linux-image-cloud-amd64
readonly HOST_PACKAGES=(qemu-system-x86 busybox-static cpio)

prog=${0##*/}

die() {
    printf '%s: error: %s\n' "$prog" "$*" >&2
    exit "$NO_RESULT"
}
note() { printf '%s: %s\n' "$prog" "$*" >&2; }

usage() {
    cat >&2 <<EOF
usage: $prog [--cache DIR] [--timeout SECONDS] [--verbose] [--] BINARY [ARGS...]
Runs BINARY with ARGS inside a 4-node NUMA guest (QEMU TCG) and exits with
its status; exits $NO_RESULT when the guest gave no result.
EOF
    exit "$NO_RESULT"
}

# --- arguments ---------------------------------------------------------------
cache=${STRATA_VM_CACHE:-$PWD/numa_vm_cache}
timeout_s=300
boot_timeout_s=180
verbose=0
while (($#)); do
    case $1 in
        --cache) (($# >= 2)) || usage; cache=$2; shift 2 ;;
        --cache=*) cache=${1#*=}; shift ;;
        --timeout) (($# >= 2)) || usage; timeout_s=$2; shift 2 ;;
        --timeout=*) timeout_s=${1#*=}; shift ;;
        --boot-timeout) (($# >= 2)) || usage; boot_timeout_s=$2; shift 2 ;;
        --boot-timeout=*) boot_timeout_s=${1#*=}; shift ;;
        --verbose|-v) verbose=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) note "unknown option '$1'"; usage ;;
        *) break ;;
    esac
done
(($# >= 1)) || usage
[[ $timeout_s =~ ^[0-9]+$ && $timeout_s -gt 0 ]] ||
    die "--timeout wants a positive number of seconds, got '$timeout_s'"
[[ $boot_timeout_s =~ ^[0-9]+$ && $boot_timeout_s -gt 0 ]] ||
    die "--boot-timeout wants a positive number of seconds, got '$boot_timeout_s'"
((boot_timeout_s <= timeout_s / 2)) || boot_timeout_s=$((timeout_s / 2 > 0 ? timeout_s / 2 : 1))
[[ -n $cache ]] || die "empty cache directory"

binary=$1
shift
if [[ $binary != */* ]]; then
    # A bare name: the current directory first, then PATH.
    if [[ -f $binary ]]; then
        binary=./$binary
    else
        binary=$(command -v -- "$binary") || die "no such binary: $1"
    fi
fi
[[ -f $binary ]] || die "no such binary: $binary"
[[ -x $binary ]] || die "not executable: $binary"
# Absolute, but without resolving symlinks: the guest sees the same path.
binary=$(realpath -s -- "$binary")

# --- host tools ----------------------------------------------------------------
is_root() { ((EUID == 0)); }

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "$@" ||
        { apt-get update && apt-get install -y --no-install-recommends "$@"; }
}

find_busybox() {
    local c
    for c in "$(command -v busybox 2>/dev/null || true)" /bin/busybox /usr/bin/busybox; do
        [[ -n $c && -x $c ]] && { printf '%s\n' "$c"; return 0; }
    done
    return 1
}

missing=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing+=(qemu-system-x86)
find_busybox >/dev/null || missing+=(busybox-static)
command -v cpio >/dev/null 2>&1 || missing+=(cpio)
if ((${#missing[@]})); then
    if is_root && command -v apt-get >/dev/null 2>&1; then
        note "installing ${missing[*]}"
        apt_install "${HOST_PACKAGES[@]}" >&2 || die "apt-get install ${HOST_PACKAGES[*]} failed"
    else
        die "missing host tools; install the Debian packages: ${HOST_PACKAGES[*]}" \
            "(apt-get install --no-install-recommends ${missing[*]})"
    fi
fi
busybox=$(find_busybox) || die "busybox still missing (Debian package busybox-static)"
for tool in qemu-system-x86_64 cpio ldd timeout realpath; do
    command -v "$tool" >/dev/null 2>&1 || die "missing host tool: $tool"
done

mkdir -p -- "$cache" || die "cannot create cache directory $cache"
cache=$(realpath -- "$cache")

# --- kernel ------------------------------------------------------------------
kernel=$cache/kernel/vmlinuz

fetch_kernel() {
    local pkg deb
    local tool
    for tool in apt-cache apt-get dpkg-deb; do
        command -v "$tool" >/dev/null 2>&1 ||
            die "no cached kernel at $kernel and no $tool to fetch one"
    done
    find_image_pkg() {
        apt-cache depends "$KERNEL_META" 2>/dev/null |
            awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-/ { print $2; exit }'
    }
    pkg=$(find_image_pkg || true)
    if [[ -z $pkg ]]; then
        is_root || die "apt-cache knows no $KERNEL_META; run 'apt-get update' as root" \
                       "or put a kernel at $kernel"
        note "apt-cache knows no $KERNEL_META; running apt-get update"
        apt-get update >&2 || die "apt-get update failed"
        pkg=$(find_image_pkg || true)
        [[ -n $pkg ]] || die "apt-cache depends $KERNEL_META names no linux-image package"
    fi
    note "fetching kernel package $pkg into $cache"
    local dl=$cache/download
    rm -rf -- "$dl" && mkdir -p -- "$dl"
    local sandbox=()
    is_root && sandbox=(-o APT::Sandbox::User=root)  # no '_apt' permission warning
    (cd -- "$dl" && apt-get "${sandbox[@]}" download "$pkg") >&2 ||
        die "apt-get download $pkg failed"
    deb=$(find "$dl" -maxdepth 1 -name "${pkg}_*.deb" -print -quit)
    [[ -n $deb ]] || die "apt-get download left no ${pkg}_*.deb in $dl"
    dpkg-deb -x "$deb" "$dl/root" || die "dpkg -x $deb failed"
    local vmlinuz
    vmlinuz=$(find "$dl/root/boot" -maxdepth 1 -name 'vmlinuz-*' -print -quit)
    [[ -n $vmlinuz ]] || die "$deb holds no boot/vmlinuz-*"
    mkdir -p -- "$cache/kernel"
    cp -- "$dl/root/boot/"config-* "$cache/kernel/" 2>/dev/null || true
    printf '%s\n' "$pkg" >"$cache/kernel/PACKAGE"
    cp -- "$vmlinuz" "$kernel.tmp" && mv -f -- "$kernel.tmp" "$kernel"
    rm -rf -- "$dl"   # the modules and the .deb are not needed
}

if [[ ! -s $kernel ]]; then
    # Serialise concurrent first runs sharing a cache.
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$cache/.kernel.lock"
        flock 9
    fi
    [[ -s $kernel ]] || fetch_kernel
    if command -v flock >/dev/null 2>&1; then exec 9>&-; fi
fi

# --- scratch directory -----------------------------------------------------------
work=$(mktemp -d "$cache/run.XXXXXX")
qemu_pid=
filter_pid=
# shellcheck disable=SC2317  # reached through the EXIT trap
cleanup() {
    local rc=$?
    # Interrupted: stop QEMU (timeout passes the TERM on) and let the console
    # reader see EOF before the scratch directory goes.
    if [[ -n $qemu_pid ]]; then
        kill -TERM "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
    fi
    if [[ -n $filter_pid ]]; then wait "$filter_pid" 2>/dev/null || true; fi
    if [[ ${STRATA_VM_KEEP:-0} == 1 ]]; then
        note "kept scratch directory $work"
    else
        rm -rf -- "$work"
    fi
    return "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

root=$work/root
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root}

# Copy FILE (following symlinks) into the initramfs at its own absolute path.
stage_file() {
    local src=$1 dst=$root$1
    mkdir -p -- "${dst%/*}"
    cp -L -- "$src" "$dst"
}

# Copy every library `ldd` lists for ELF file $1, at the same paths.
stage_libs() {
    local out line path
    if ! out=$(LC_ALL=C ldd "$1" 2>&1); then
        [[ $out == *"not a dynamic executable"* || $out == *"statically linked"* ]] && return 0
        die "ldd $1 failed: $out"
    fi
    while IFS= read -r line; do
        line=${line#"${line%%[![:space:]]*}"}   # trim leading blanks
        case $line in
            *"=> not found"*) die "ldd $1: ${line%% *} not found" ;;
            *"=> /"*) path=${line#*=> }; path=${path%% (0x*} ;;
            /*) path=${line%% (0x*} ;;
            *) continue ;;   # linux-vdso.so.1 and friends
        esac
        [[ -e $root$path ]] || stage_file "$path"
    done <<<"$out"
}

# busybox and its applets (only the /bin symlinks; nothing in the host changes).
cp -L -- "$busybox" "$root/bin/busybox"
stage_libs "$busybox"
while IFS= read -r applet; do
    [[ -n $applet && $applet != busybox ]] || continue
    ln -sf busybox "$root/bin/$applet"
done < <("$busybox" --list)
[[ -e $root/bin/sh && -e $root/bin/poweroff && -e $root/bin/mount ]] ||
    die "$busybox lacks the sh, mount or poweroff applet"
ln -sf ../bin/busybox "$root/sbin/poweroff"

# The test binary and its libraries. A path the guest's busybox already
# holds (/bin/true) would overwrite busybox through its applet link.
[[ ! -e $root$binary && ! -L $root$binary ]] ||
    die "cannot run $binary in the guest: the guest's busybox has that path; copy the binary elsewhere"
stage_file "$binary"
stage_libs "$binary"
[[ -f /etc/ld.so.cache ]] && cp -- /etc/ld.so.cache "$root/etc/ld.so.cache"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
# The initial console; without root, /init reopens it from devtmpfs instead.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
mkdir -p -- "$root$PWD"

# Single-quote $1 for a POSIX shell.
shquote() {
    local q="'" r="'\\''"
    printf "'%s'" "${1//"$q"/"$r"}"
}

{
    cat <<'EOF'
#!/bin/sh
# Generated by run_in_vm.sh.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
# Keep kernel messages off the console while the test runs.
echo 1 >/proc/sys/kernel/printk
export HOME=/root
EOF
    [[ -n ${LD_LIBRARY_PATH:-} ]] &&
        printf 'export LD_LIBRARY_PATH=%s\n' "$(shquote "$LD_LIBRARY_PATH")"
    while IFS= read -r var; do
        [[ $var =~ ^(GTEST_|STRATA_) && $var != STRATA_VM_* ]] || continue
        printf 'export %s=%s\n' "$var" "$(shquote "${!var}")"
    done < <(compgen -e)
    printf 'cd %s || cd /\n' "$(shquote "$PWD")"
    printf 'set --'
    for arg in "$@"; do printf ' %s' "$(shquote "$arg")"; done
    printf '\n'
    printf 'echo %s\n' "$BEGIN_MARK"
    printf '%s "$@" </dev/null\n' "$(shquote "$binary")"
    cat <<EOF
rc=\$?
echo "$SENTINEL=\$rc"
poweroff -f
EOF
} >"$root/init"
chmod 755 "$root/init"

initrd=$work/initramfs.cpio
# Uncompressed: QEMU copies it straight into guest memory, which is faster
# under TCG than having the emulated kernel gunzip it.
(cd -- "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) \
    >"$initrd" || die "cpio failed"

# --- QEMU -------------------------------------------------------------------------
# shellcheck disable=SC2054  # the commas belong to QEMU's option syntax
qemu=(qemu-system-x86_64
    -accel tcg,thread=multi -cpu max
    -smp 8,sockets=2,cores=4 -m 2G)
for n in 0 1 2 3; do
    qemu+=(-object "memory-backend-ram,id=m$n,size=512M"
           -numa "node,nodeid=$n,cpus=$((2 * n))-$((2 * n + 1)),memdev=m$n")
done
for a in 0 1 2 3; do
    for b in 0 1 2 3; do
        if ((a == b)); then d=10
        elif ((a / 2 == b / 2)); then d=12   # same package
        else d=32
        fi
        qemu+=(-numa "dist,src=$a,dst=$b,val=$d")
    done
done
# -nic none: the test needs no network, so skip the default NIC (and its
# iPXE option ROM, which --no-install-recommends does not install).
# numa_balancing=disable: the kernel must not migrate pages while a test
# checks where they are.
qemu+=(-nographic -no-reboot -nic none
    -kernel "$kernel" -initrd "$initrd"
    -append "console=ttyS0 panic=-1 quiet numa_balancing=disable")

log=$work/console.log
status_file=$work/status
began_file=$work/began
fifo=$work/console.fifo
qemu_err=$work/qemu.stderr

# Removes terminal control sequences (SeaBIOS resets the screen) from $line.
strip_escapes() {
    local csi=$'(.*)\e\\[[0-9;?]*[A-Za-z](.*)'
    line=${line//$'\e'c/}
    while [[ $line =~ $csi ]]; do line=${BASH_REMATCH[1]}${BASH_REMATCH[2]}; done
}

# Reads the console: a copy (CRs and escapes stripped) to $log, test output
# (everything between the start marker and the sentinel, as is) to stdout.
filter_console() {
    local line raw state=booting
    exec 3>"$log"
    while IFS= read -r line || [[ -n $line ]]; do
        line=${line//$'\r'/}
        raw=$line
        strip_escapes
        printf '%s\n' "$line" >&3
        [[ $state == booting ]] || line=$raw
        case $state in
            booting)
                ((verbose)) && printf '%s\n' "$line"
                if [[ $line == *"$BEGIN_MARK" ]]; then
                    state=running
                    : >"$began_file"
                fi
                ;;
            running)
                if [[ $line =~ ^(.*)${SENTINEL}=([0-9]+)$ ]]; then
                    [[ -n ${BASH_REMATCH[1]} ]] && printf '%s\n' "${BASH_REMATCH[1]}"
                    printf '%s\n' "${BASH_REMATCH[2]}" >"$status_file"
                    state=finished
                    ((verbose)) && printf '%s\n' "$line"
                else
                    printf '%s\n' "$line"
                fi
                ;;
            finished)
                ((verbose)) && printf '%s\n' "$line"
                ;;
        esac
    done
    exec 3>&-
}

# A guest that stalls while it boots says so on the console (the kernel's
# watchdog prints these at KERN_EMERG, past 'quiet'): with 8 vCPUs of TCG
# on a small host a boot can stall for good, and a new boot does not.
readonly BOOT_STALL='soft lockup|self-detected stall|detected stalls on CPUs'

# Boots the guest once, with a limit of $1 seconds; sets qemu_rc, and
# boot_stalled when the boot was abandoned (see BOOT_STALL, --boot-timeout).
run_guest() {
    rm -f -- "$log" "$status_file" "$began_file" "$fifo" "$qemu_err"
    mkfifo "$fifo"
    filter_console <"$fifo" &
    filter_pid=$!
    # timeout forwards TERM to QEMU; -k makes sure it is gone 10 s later.
    timeout -k 10 "$1" "${qemu[@]}" </dev/null >"$fifo" 2>"$qemu_err" &
    qemu_pid=$!
    qemu_rc=0
    boot_stalled=0
    boot_why=
    local boot_start=$SECONDS stall_seen=
    # Watch the boot; once the test has begun it has the rest of the limit.
    # A stall report gives the boot 60 s more (a loaded host can print one
    # and still boot), not the whole boot limit.
    while [[ ! -e $began_file ]] && kill -0 "$qemu_pid" 2>/dev/null; do
        if [[ -z $stall_seen ]] && grep -qE "$BOOT_STALL" "$log" 2>/dev/null; then
            stall_seen=$SECONDS
        fi
        if ((SECONDS - boot_start >= boot_timeout_s)); then
            boot_why="no test started within ${boot_timeout_s}s"
        elif [[ -n $stall_seen ]] && ((SECONDS - stall_seen >= 60)); then
            boot_why="'$(grep -m 1 -oE "$BOOT_STALL" "$log")' on the console, no test 60s later"
        fi
        if [[ -n $boot_why ]]; then
            [[ -e $began_file ]] && { boot_why=; break; }
            boot_stalled=1
            kill -TERM "$qemu_pid" 2>/dev/null || true
            break
        fi
        sleep 0.5
    done
    wait "$qemu_pid" || qemu_rc=$?
    qemu_pid=
    wait "$filter_pid" || true
    filter_pid=
    if ((verbose)) && [[ -s $qemu_err ]]; then
        sed 's/^/qemu: /' "$qemu_err" >&2
    fi
}

# QEMU's TCG very occasionally dies of a signal while the kernel boots (seen
# once as SIGSEGV in ~100 boots).  The test has not started then, so boot
# again, at most twice, within the same overall time limit.
start=$SECONDS
attempt=1
while :; do
    run_guest "$((timeout_s - (SECONDS - start)))"
    [[ -s $status_file ]] && exit "$(<"$status_file")"
    left=$((timeout_s - (SECONDS - start)))
    if [[ ! -e $began_file ]] && ((boot_stalled && attempt < 3 && left > 30)); then
        note "the guest stalled while it booted (boot $attempt: $boot_why); booting again"
        attempt=$((attempt + 1))
        continue
    fi
    if [[ ! -e $began_file ]] && ((qemu_rc > 128 && qemu_rc != 137 &&
                                   attempt < 3 && left > 30)); then
        note "QEMU died with status $qemu_rc before the test started; booting again"
        attempt=$((attempt + 1))
        continue
    fi
    break
done
elapsed=$((SECONDS - start))

if ((boot_stalled)); then
    reason="the guest stalled while it booted, $attempt boot(s), the last: $boot_why"
elif ((qemu_rc == 124 || qemu_rc == 137)); then
    reason="timed out after ${timeout_s}s"
elif grep -q 'Kernel panic' "$log" 2>/dev/null; then
    reason="kernel panic"
else
    reason="QEMU exited with status $qemu_rc after ${elapsed}s"
fi
{
    printf '%s: error: no %s line from the guest (%s); last console lines:\n' \
        "$prog" "$SENTINEL" "$reason"
    tail -n 40 "$log" 2>/dev/null | sed 's/^/  | /'
    if [[ -s $qemu_err ]]; then
        printf '%s: QEMU said:\n' "$prog"
        tail -n 20 "$qemu_err" | sed 's/^/  | /'
    fi
} >&2
exit "$NO_RESULT"
