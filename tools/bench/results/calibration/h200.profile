# ember-sim profile measured by ember-sim-calibrate on NVIDIA H200, 4096 MiB managed
# measured: prefetch to GPU 16.4 / 44.1 / 50.2 GB/s (2 MiB / 64 MiB / one call);
#   to host 10.2 / 13.5 GB/s (2 MiB / one call); default first pass 7.0 GB/s
device_read_gbps = 4516
mapped_read_gbps = 51.32
mapped_sparse_reads_per_s = 3.944e+08
resident_sparse_reads_per_s = 4.121e+10
mapped_sparse_block_us = 0.001
resident_sparse_block_us = 0.001
promote_gbps = 50.16
promote_call_us = 85.84
demote_gbps = 13.55
demote_call_us = 50.6
advise_ms_per_gib = 48.15
advise_call_us = 30.94
fault_batch_us = 20
fault_batch_pages = 256
fault_migrate_gbps = 8.094
first_touch_gbps = 4.056
launch_us = 3.874
vram_gib = 139.8
