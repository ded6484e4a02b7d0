-- Argo CD health check for crossfade.io/Cutover (resource.customizations.health.crossfade.io_Cutover).
-- Healthy once the cutover completed; Progressing while it is pending or moving, or while
-- the controller has not yet observed the latest spec (status.observedGeneration behind
-- metadata.generation); Suspended while paused (by a person, spec.paused, or drift: the
-- message says which); Degraded once rolled back or failed (a person must act). The
-- message is the controller's own line (the Ready condition's message).
-- Tested by internal/cutover/objectstatus (TestArgoCDHealth) against statuses the engine's
-- journals project to.
local hs = {}
local status = obj.status
if status == nil or status.phase == nil or status.phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the crossfade controller (crossfade controller --cutovers) to take up the cutover"
  return hs
end

local generation = 0
if obj.metadata ~= nil and obj.metadata.generation ~= nil then
  generation = obj.metadata.generation
end
local observed = status.observedGeneration or 0
if observed < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation .. " (status describes generation " .. observed .. ", phase " .. status.phase .. ")"
  return hs
end

local message = ""
if status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do
    if c.type == "Ready" and c.message ~= nil then
      message = c.message
    end
  end
end
if message == "" then
  message = status.phase
  if status.progress ~= nil then
    message = message .. " at step " .. status.progress
  end
end

local byPhase = {
  Pending = "Progressing",
  Progressing = "Progressing",
  Paused = "Suspended",
  Completed = "Healthy",
  RolledBack = "Degraded",
  Failed = "Degraded",
}
hs.status = byPhase[status.phase]
if hs.status == nil then
  hs.status = "Unknown"
  message = "Unknown phase " .. status.phase .. ": " .. message
end
hs.message = message
return hs
