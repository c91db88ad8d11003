# The nvme_faults step of tests/guest/roce-link.sh (sourced by it): NVMe over RDMA across
# the VMs with faults. The target is vm0's vcx_0 (both roce tests have vcx_0 there); the
# host in vm1 is vcx_0 or rxe0. nvmet-rdma with use_srq=1 exports nullb0 on 192.168.77.1
# (tests/guest/nvme-common.sh); the host connects with keep-alive 5 s, reconnect delay
# 2 s and controller loss timeout 30 s. Four faults, each on a live controller:
#   link: vm0's port loses its link (the device's `link` property). The host's
#     keep-alive and its QPs' retries fail on the silent wire; the controller leaves
#     `live` within 30 s. vm0 brings the link back; the host reconnects by itself
#     (its reconnect loop, through rdma_cm over the link) and is `live` again within
#     60 s; 4 MiB fio verify (err=0), disconnect.
#   QP error: the device puts every QP of nvmet's (the host's association: admin and I/O
#     queues) in error (the `qp-error` property, a WQ catastrophic error). The host's
#     next keep-alive or command finds no answer (a QP in error discards what arrives),
#     its QP's retries run out, and it resets and reconnects by itself; 4 MiB verified,
#     disconnect.
#   host QP error (a vcx_0 host only: rxe has no such property): the host's own device
#     puts an I/O QP of nvme_rdma's in error. Its posted receives complete flushed, the
#     host resets the controller and reconnects by itself over the wire (a new
#     association, new QPs at both ends); 4 MiB verified, disconnect.
#   disconnect, link down: the link goes down under a live controller, at the host's own
#     port when the host is vcx_0, else at vm0's, and the host disconnects at once. The
#     controller's shutdown (a Property Set of CC) gets no answer and waits for the admin
#     timeout on any device: nvme_core's admin_timeout (read when a command is issued),
#     60 s by default, is 10 s until the disconnect returns. Shutdown and queue teardown
#     (drains included) must complete within disconnect's 60 s. Then the link comes back
#     (carrier and port ACTIVE within 15 s) for the steps after.
# Then the target comes down, nvmet's modules unload, and each vcx_0 end holds the
# objects it held before; the kernel logs stay clean (checked at the end of the run).
# Skipped when vm0's end is rxe0 (mode pair). Alone: ROCE_STEPS="setup nvme_faults".

# The host's controller reconnected by itself (one more "Successfully reconnected" in the
# log than RECONNECTS) and live within 60 s, then 4 MiB verified through it.
faults_host_back() { # context reconnects
	local i
	# The state first (ctrl_state_is: no process): under TCG each dmesg | grep costs the
	# guest some 75 ms of CPU, and this wait lasts seconds (docs/testing.md, "Where the
	# time goes").
	for i in $(seq 600); do
		ctrl_state_is "$ctrl" live &&
			[ "$(dmesg_count "nvme $ctrl: Successfully reconnected")" -gt "$2" ] && break
		sleep 0.1
	done
	[ "$(dmesg_count "nvme $ctrl: Successfully reconnected")" -gt "$2" ] ||
		fail "$1: $ctrl did not reconnect within 60 s (state $(cat /sys/class/nvme/$ctrl/state 2>/dev/null))"
	ctrl_wait "$ctrl" live 1 || fail "$1: $ctrl reconnected but not live"
	fio_verify "$ns1" 4M || { cat /tmp/fio-verify.out >&2; fail "$1: verify after recovery"; }
}

step_nvme_faults() {
	local ctx base="" qpns q t0 n where atmo
	if [ "$([ "$me" = 0 ] && echo "$DEV" || echo "$OTHER_DEV")" = rxe0 ]; then
		log "step nvme_faults skipped: vm0's end is rxe0, and the faults are vcx_0's properties"
		return 0
	fi
	nvme_step_prepare
	is_rxe || base=$(ulp_objects)
	if [ "$me" = 0 ]; then
		ctx="NVMe/RDMA faults, target ($DEV, host $OTHER_DEV in vm1)"
		nullb_setup
		target_up 1
		vm_signal nvmef-target
		# link: down once the host is connected, up once it saw the controller leave live
		vm_wait nvmef-connected $WAIT >/dev/null
		t0=$SECONDS
		ulp_link off
		ok "$ctx: link off under the host's live controller"
		vm_wait nvmef-ctrl-lost $WAIT >/dev/null
		faults_link_on "$ctx: link"
		ok "$ctx: link on again after $((SECONDS - t0)) s"
		vm_wait nvmef-link-done $((WAIT + 120)) >/dev/null
		# QP error: every QP of nvmet's, the queues of the host's one association
		vm_wait nvmef-connected2 $WAIT >/dev/null
		qpns=$(ulp_qpns nvmet_rdma)
		[ -n "$qpns" ] || { rdma res show cm_id >&2; fail "$ctx: no QP of nvmet_rdma in rdma res"; }
		for q in $qpns; do ulp_qp_error "$q"; done
		ok "$ctx: nvmet's QPs $(echo $qpns) put in error"
		vm_signal nvmef-qp-error "$(echo $qpns)"
		# disconnect, link down: here only when the host is rxe0 (a vcx_0 host drops its own)
		if [ "$OTHER_DEV" = rxe0 ]; then
			vm_wait nvmef-link3-off $((WAIT + 120)) >/dev/null
			ulp_link off
			vm_signal nvmef-link3-is-off
			vm_wait nvmef-link3-on $((WAIT + 120)) >/dev/null
			faults_link_on "$ctx: disconnect, link down"
			ok "$ctx: link down while the host disconnected, up again"
			vm_signal nvmef-link3-is-on
		fi
		vm_wait nvmef-host-done $((WAIT + 120)) >/dev/null
		target_down
		nullb_remove
		ok "$ctx: target taken down, nvmet unloaded"
	else
		ctx="NVMe/RDMA faults, host ($DEV, target $OTHER_DEV in vm0)"
		vm_wait nvmef-target $WAIT >/dev/null
		modprobe nvme-rdma || fail "modprobe nvme-rdma"
		connect "$ctx: link"
		n=$(dmesg_count "nvme $ctrl: Successfully reconnected")
		vm_signal nvmef-connected
		ctrl_wait "$ctrl" connecting 30 || ctrl_wait "$ctrl" resetting 1 ||
			fail "$ctx: link down at the target: $ctrl still $(cat /sys/class/nvme/$ctrl/state) after 30 s"
		ok "$ctx: target's link down: $ctrl left live ($(cat /sys/class/nvme/$ctrl/state))"
		vm_signal nvmef-ctrl-lost
		faults_host_back "$ctx: link" "$n"
		ok "$ctx: link up: $ctrl reconnected by itself, 4 MiB verified"
		disconnect "$ctx: link"
		vm_signal nvmef-link-done
		connect "$ctx: QP error"
		n=$(dmesg_count "nvme $ctrl: Successfully reconnected")
		vm_signal nvmef-connected2
		qpns=$(vm_wait nvmef-qp-error $WAIT)
		faults_host_back "$ctx: QP error" "$n"
		ok "$ctx: the target's QPs $qpns in error: $ctrl reconnected, 4 MiB verified"
		disconnect "$ctx: QP error"
		if ! is_rxe; then
			connect "$ctx: host QP error"
			n=$(dmesg_count "nvme $ctrl: Successfully reconnected")
			# One QP, an I/O queue's: the flush errors it completes make the host tear
			# every queue down at once, so the others would be gone before their turn.
			qpns=$(ulp_qpns nvme_rdma)
			[ -n "$qpns" ] || { rdma res show cm_id >&2; fail "$ctx: no QP of nvme_rdma in rdma res"; }
			ulp_qp_error "$(echo "$qpns" | tail -1)"
			ok "$ctx: the host's own QP $(echo "$qpns" | tail -1) (of $(echo $qpns)) put in error"
			faults_host_back "$ctx: host QP error" "$n"
			q=$(ulp_qpns nvme_rdma)
			[ -n "$q" ] && [ "$(echo $q)" != "$(echo $qpns)" ] ||
				fail "$ctx: host QP error: $ctrl live on the old QPs ($(echo $q))"
			ok "$ctx: host QP error: $ctrl reconnected on QPs $(echo $q), 4 MiB verified"
			disconnect "$ctx: host QP error"
		fi
		atmo=$(cat /sys/module/nvme_core/parameters/admin_timeout)
		echo 10 >/sys/module/nvme_core/parameters/admin_timeout || fail "nvme_core admin_timeout"
		connect "$ctx: disconnect, link down"
		if is_rxe; then
			vm_signal nvmef-link3-off
			vm_wait nvmef-link3-is-off $WAIT >/dev/null
			where="the target's link (vm0)"
		else
			ulp_link off
			where="its own link"
		fi
		t0=$SECONDS
		disconnect "$ctx: disconnect, link down"
		echo "$atmo" >/sys/module/nvme_core/parameters/admin_timeout
		ok "$ctx: disconnect with $where down completed in $((SECONDS - t0)) s"
		if is_rxe; then
			vm_signal nvmef-link3-on
			vm_wait nvmef-link3-is-on $WAIT >/dev/null
		else
			faults_link_on "$ctx: disconnect, link down"
		fi
		ulp_unload nvme_rdma
		ok "$ctx: disconnected, nvme_rdma unloaded"
		vm_signal nvmef-host-done
	fi
	if [ -n "$base" ]; then ulp_expect_objects "$base" "$ctx"; fi
	vm_signal nvmef-done
	vm_wait nvmef-done $WAIT >/dev/null
	rxe_check nvme_faults
}
